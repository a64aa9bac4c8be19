import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { Option } from 'commander';

import { parseDurationMs } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import type { Op } from '../core/op.js';
import { exactJson } from '../core/exact-json.js';
import { describeBytes, parseByteSize } from '../core/memory-limit.js';
import { anomalyWords, explainRegisterResult, type KeyExplanation } from '../check/explain-register.js';
import { defaultModel } from '../check/history/default-model.js';
import { readEdnValue } from '../check/history/edn.js';
import { HistoryError } from '../check/history/history-error.js';
import type { ParsedHistory } from '../check/history/parsed-history.js';
import { readJsonValue } from '../check/history/json-value.js';
import { STDIN_NAME, readHistoryFile, readHistoryStream } from '../check/history/read-history.js';
import { type LinearizabilityResult, checkOps } from '../check/linearizable.js';
import { READ_CONSISTENCIES, type ReadConsistency } from '../check/sequential-reads.js';
import { renderLinearizabilityHtml } from '../check/linearizable-html.js';
import { MODEL_NAMES, type ModelName } from '../check/model.js';
import { REGISTER_MODEL_NAMES, isRegisterModelName } from '../check/models/by-name.js';
import { describeCanonical, describeValue } from '../check/models/value.js';
import {
  TXN_MODEL_NAMES,
  type TxnModelName,
  isTxnModelName,
  transactionalModel,
} from '../check/history/txn-model.js';
import {
  CONSISTENCY_MODELS,
  type ConsistencyModel,
  DEFAULT_CONSISTENCY,
} from '../check/txn/consistency-model.js';
import { type TxnFileReport, type TxnInputError, checkTxnHistory, printTxnReport } from './check-txn.js';
import type { RegisterCommand } from './command.js';

const EXIT_VALID = 0;
const EXIT_INVALID = 1;
const EXIT_UNKNOWN = 2;
/** The file name that means standard input. */
const STDIN_ARG = '-';

interface CheckCliOptions {
  readonly model?: ModelName | TxnModelName;
  readonly consistency?: ConsistencyModel;
  readonly timeLimit?: string;
  readonly memoryLimit?: string;
  readonly json?: boolean;
  readonly html?: string;
  readonly initial?: string;
  readonly reads?: ReadConsistency;
}

/** The registers' value before any write, when `--initial` gives one (it may be null). */
type Initial = { readonly value: unknown } | undefined;

/** `--initial VALUE`: JSON (`0`, `null`, `"x"`, `[1, 2]`), else one EDN form (`nil`, `:x`). */
function parseInitial(text: string): unknown {
  try {
    return readJsonValue(text, '--initial', 1);
  } catch {
    try {
      return readEdnValue(text, '--initial', 1);
    } catch {
      throw new UsageError(
        'BAD_INITIAL',
        `--initial: cannot read ${JSON.stringify(text)} as JSON or EDN: write one value, e.g. --initial 0, --initial null or --initial '"x"'`,
      );
    }
  }
}

/** What `--json` prints for one file checked for linearizability, or that could not be read. */
interface RegisterFileReport {
  readonly file: string;
  readonly format?: string;
  readonly valid: true | false | 'unknown';
  readonly result?: LinearizabilityResult;
  readonly error?: string;
  readonly html?: string;
  /** The line of the op that cannot be placed, when not linearizable. */
  readonly failingLine?: number;
  /** Each violating key's register anomaly, named (register models only). */
  readonly explanations?: readonly KeyExplanation[];
  /** Set when reads were checked as other than linearizable (`--reads`). */
  readonly reads?: ReadConsistency;
}

type FileReport = RegisterFileReport | TxnFileReport | TxnInputError;

/** How many violating keys the text lists (`--json` has them all). */
const KEYS_LISTED = 10;

function describeOp(op: Op, line: number | undefined): string {
  return `${op.f} ${describeValue(op.value)} by process ${op.process} (index ${op.index}${line === undefined ? '' : `, line ${line}`})`;
}

function explanationLine(e: KeyExplanation): string {
  return `${e.key === undefined ? '' : `key ${describeCanonical(e.key)}: `}${anomalyWords(e.anomaly)}: ${e.message}`;
}

function verdictWord(result: LinearizabilityResult): string {
  if (result.valid === true) return 'linearizable';
  if (result.valid === false) return 'NOT linearizable';
  if (result.unknownBecause === 'memory') {
    const bound =
      result.memoryLimitBytes === undefined ? '' : ` of ${describeBytes(result.memoryLimitBytes)}`;
    return `unknown (memory limit${bound}: the search would take more; raise --memory-limit)`;
  }
  return 'unknown (time limit)';
}

/** A flag's value read by `parse`, undefined when absent; what `parse` throws becomes a usage error naming the flag. */
function parsedFlag(
  flag: string,
  code: string,
  text: string | undefined,
  parse: (text: string) => number,
): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch (error) {
    throw new UsageError(code, `${flag}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** What a check may take: time (ms) and memory (bytes), each undefined for the default. */
interface Limits {
  readonly timeLimitMs: number | undefined;
  readonly memoryLimitBytes: number | undefined;
}

/** `--html OUT` is the page for one file; for several, a directory of `<name>.html` (made unique). */
function htmlPath(out: string, file: string, several: boolean, used: Set<string>): string {
  if (!several) return out;
  const base = file === STDIN_NAME ? 'stdin' : path.basename(file);
  let name = `${base}.html`;
  for (let n = 2; used.has(name); n++) name = `${base}.${n}.html`;
  used.add(name);
  return path.join(out, name);
}

async function checkFile(
  arg: string,
  options: CheckCliOptions,
  initial: Initial,
  { timeLimitMs, memoryLimitBytes }: Limits,
  several: boolean,
  usedHtmlNames: Set<string>,
): Promise<FileReport> {
  const file = arg === STDIN_ARG ? STDIN_NAME : arg;
  let history: ParsedHistory;
  try {
    history = arg === STDIN_ARG ? await readHistoryStream(process.stdin) : await readHistoryFile(file);
  } catch (error) {
    if (error instanceof HistoryError) return { file, valid: 'unknown', error: error.message };
    throw error;
  }
  const transactional = transactionalModel(history);
  const chosen = options.model;
  const registerModel = chosen === undefined || isTxnModelName(chosen) ? undefined : chosen;
  const txnModel: TxnModelName | undefined =
    chosen === undefined ? transactional : isTxnModelName(chosen) ? chosen : undefined;
  const htmlOut =
    options.html === undefined ? undefined : htmlPath(options.html, file, several, usedHtmlNames);
  const inputError = (error: string): FileReport => ({
    file,
    format: history.format,
    valid: 'unknown',
    error: `${file}: ${error}`,
  });
  const initialIsFor = `--initial is for the register models (${REGISTER_MODEL_NAMES.join(', ')})`;
  if (txnModel !== undefined) {
    if (initial !== undefined)
      return inputError(`${initialIsFor}, and this history is checked as ${txnModel}: drop --initial`);
    if (options.reads !== undefined)
      return inputError(
        `--reads is for register histories, and this one is checked as ${txnModel}: drop --reads`,
      );
    const consistency = options.consistency ?? DEFAULT_CONSISTENCY;
    return checkTxnHistory(file, history, txnModel, consistency, htmlOut);
  }
  if (transactional !== undefined)
    return inputError(
      `the values are transactions (micro-op lists such as [["r", k, v]]), which the ${registerModel} model cannot read: use --model ${transactional}, or drop --model`,
    );
  if (options.consistency !== undefined)
    return inputError(
      'not a transactional history (no f txn, no micro-op lists): --consistency is for --model list-append or rw-register; drop it to check for linearizability',
    );
  const model = registerModel ?? defaultModel(history);
  if (initial !== undefined && !isRegisterModelName(model))
    return inputError(`${initialIsFor}, and this history is checked as ${model}: drop --initial`);
  if (options.reads === 'sequential' && !isRegisterModelName(model))
    return inputError(
      `--reads sequential is for the register models (${REGISTER_MODEL_NAMES.join(', ')}), and this history is checked as ${model}: drop --reads`,
    );
  let result: LinearizabilityResult;
  try {
    result = await checkOps(history.ops, {
      model,
      ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
      ...(memoryLimitBytes === undefined ? {} : { memoryLimitBytes }),
      ...(initial === undefined ? {} : { initial: initial.value }),
      ...(options.reads === undefined ? {} : { reads: options.reads }),
    });
  } catch (error) {
    if (!(error instanceof HistoryError)) throw error;
    const line = error.position === undefined ? 1 : history.lines[error.position];
    return { file, format: history.format, valid: 'unknown', error: `${file}:${line}: ${error.message}` };
  }
  const html = htmlOut;
  if (html !== undefined) {
    await mkdir(path.dirname(path.resolve(html)), { recursive: true });
    const explanations = explainRegisterResult(result, history.ops, initial?.value).map(explanationLine);
    await writeFile(
      html,
      renderLinearizabilityHtml(result, history.ops, undefined, { title: file, explanations }),
    );
  }
  const failing = result.counterexample?.failingOp;
  const failingPosition = failing === undefined ? -1 : history.ops.indexOf(failing);
  const explanations = explainRegisterResult(result, history.ops, initial?.value);
  return {
    file,
    format: history.format,
    valid: result.valid,
    result,
    ...(explanations.length > 0 ? { explanations } : {}),
    ...(html === undefined ? {} : { html }),
    ...(failingPosition < 0 ? {} : { failingLine: history.lines[failingPosition] }),
    ...(options.reads === 'sequential' ? { reads: options.reads } : {}),
  };
}

function printReport(report: RegisterFileReport): void {
  const { result } = report;
  if (result === undefined) return;
  const undecided =
    result.undecidedPartitions === undefined
      ? ''
      : ` (${result.undecidedPartitions} not decided: their searches were long, and the others settle the verdict)`;
  const partitions = `${result.partitions} partition${result.partitions === 1 ? '' : 's'}${undecided}`;
  process.stdout.write(
    `${report.file}: ${verdictWord(result)} (${result.model}${report.reads === 'sequential' ? ' with sequential reads' : ''}, ${partitions}, ${result.ops} ops, ${result.elapsedMs.toFixed(1)} ms)\n`,
  );
  const example = result.counterexample;
  if (example !== undefined) {
    const key = example.key === undefined ? '' : `key ${describeCanonical(example.key)}: `;
    process.stdout.write(
      `  ${key}after ${example.longestPrefix.length} linearized ops the state is ${example.stateBefore}, and ${describeOp(example.failingOp, report.failingLine)} cannot be placed\n`,
    );
  }
  const explanations = report.explanations ?? [];
  for (const e of explanations.slice(0, KEYS_LISTED)) process.stdout.write(`  ${explanationLine(e)}\n`);
  if (explanations.length > KEYS_LISTED) {
    process.stdout.write(
      `  … and ${explanations.length - KEYS_LISTED} more key(s) (--json lists them all)\n`,
    );
  }
  if (report.html !== undefined) process.stdout.write(`  visualization: ${report.html}\n`);
}

/** `mallory check FILE…`: checks histories for linearizability. */
export const registerCheck: RegisterCommand = (program, setExit) => {
  program
    .command('check')
    .description(
      'check histories (history.jsonl, a JSON array of ops, Jepsen history.edn, history.txt or log lines) for linearizability, or transactional (Elle-style) histories against a consistency model',
    )
    .argument('<files...>', 'history files; - reads one from standard input')
    .addOption(
      new Option(
        '--model <model>',
        'the model (default: guessed from the history); list-append and rw-register check transactions',
      ).choices([...MODEL_NAMES, ...TXN_MODEL_NAMES]),
    )
    .addOption(
      new Option(
        '--consistency <model>',
        `the consistency model transactions are checked against (default: ${DEFAULT_CONSISTENCY})`,
      ).choices(CONSISTENCY_MODELS),
    )
    .option(
      '--time-limit <duration>',
      'give up on a file after this long (e.g. 60s): verdict unknown (linearizability only)',
    )
    .option(
      '--memory-limit <size>',
      "give up on a file before the check holds this much memory (e.g. 8g, 512m): verdict unknown (linearizability only; default: half the machine's memory)",
    )
    .option(
      '--initial <value>',
      "the registers' value before any write (JSON or EDN, e.g. 0 as Knossos has it; default nil)",
    )
    .addOption(
      new Option(
        '--reads <consistency>',
        "what reads promise (register models): sequential lets a read be stale, never older than its own process's last update of the key",
      ).choices(READ_CONSISTENCIES),
    )
    .option('--json', 'print one JSON document')
    .option('--html <out>', 'write an HTML visualization (a file; a directory when checking several files)')
    .action(async (files: string[], options: CheckCliOptions) => {
      if (options.consistency !== undefined && options.model !== undefined && !isTxnModelName(options.model))
        throw new UsageError(
          'BAD_CONSISTENCY',
          `--consistency is for --model list-append or rw-register, not ${options.model}: drop one of them`,
        );
      const timeLimitMs = parsedFlag('--time-limit', 'BAD_TIME_LIMIT', options.timeLimit, parseDurationMs);
      const memoryLimitBytes = parsedFlag(
        '--memory-limit',
        'BAD_MEMORY_LIMIT',
        options.memoryLimit,
        parseByteSize,
      );
      if (files.filter((f) => f === STDIN_ARG).length > 1)
        throw new UsageError('BAD_FILES', '- (standard input) can be read once: name it once');
      const initial: Initial =
        options.initial === undefined ? undefined : { value: parseInitial(options.initial) };
      const several = files.length > 1;
      const reports: FileReport[] = [];
      const usedHtmlNames = new Set<string>();
      for (const file of files) {
        const report = await checkFile(
          file,
          options,
          initial,
          { timeLimitMs, memoryLimitBytes },
          several,
          usedHtmlNames,
        );
        reports.push(report);
        if ('error' in report && report.error !== undefined)
          process.stderr.write(`mallory check: ${report.error}\n`);
        else if (options.json === true) continue;
        else if ('consistency' in report) printTxnReport(report);
        else printReport(report);
      }
      const anyInvalid = reports.some((r) => r.valid === false);
      const allValid = reports.every((r) => r.valid === true);
      const overall = anyInvalid ? false : allValid ? true : 'unknown';
      if (options.json === true) {
        process.stdout.write(`${exactJson({ valid: overall, files: reports }, 2)}\n`);
      }
      setExit(overall === true ? EXIT_VALID : overall === false ? EXIT_INVALID : EXIT_UNKNOWN);
    });
};
