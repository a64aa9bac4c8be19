import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { Op } from '../core/op.js';
import { exactJson } from '../core/exact-json.js';
import { HistoryError } from '../check/history/history-error.js';
import type { HistoryFormat, ParsedHistory } from '../check/history/parsed-history.js';
import { type TxnModelName, transactionalModel } from '../check/history/txn-model.js';
import { ednValue } from '../check/history/write-edn.js';
import { checkListAppend } from '../check/txn/check-list-append.js';
import { checkRwRegister } from '../check/txn/check-rw-register.js';
import { type ConsistencyModel, anomaliesForbiddenBy } from '../check/txn/consistency-model.js';
import { renderTxnHtml } from '../check/txn/txn-html.js';
import { type TxnRef, type TxnReport, cycleLine, txnReport } from '../check/txn/txn-report.js';

/** How many anomalies of each type the text lists (`--json` has them all). */
const ANOMALIES_LISTED_PER_TYPE = 3;

/** What `--json` prints for a transactional history that was checked. */
export type TxnFileReport = TxnReport & {
  readonly file: string;
  readonly format: HistoryFormat;
  readonly html?: string;
};

/** A history that could not be checked: one line saying what to do. */
export interface TxnInputError {
  readonly file: string;
  readonly format: HistoryFormat;
  readonly valid: 'unknown';
  readonly error: string;
}

/** Words added to a checker's complaint: what the history looks like instead. */
function hint(history: ParsedHistory, checker: TxnModelName): string {
  const guessed = transactionalModel(history);
  if (guessed === undefined)
    return ' (not a transactional history: drop --model to check it for linearizability)';
  return guessed === checker ? '' : ` (it looks like ${guessed}: try --model ${guessed})`;
}

/** Checks a transactional history; input that does not fit the checker is an input error. */
export async function checkTxnHistory(
  file: string,
  history: ParsedHistory,
  checker: TxnModelName,
  consistency: ConsistencyModel,
  htmlOut: string | undefined,
): Promise<TxnFileReport | TxnInputError> {
  const check = checker === 'list-append' ? checkListAppend : checkRwRegister;
  let report: TxnReport;
  try {
    const lines = new Map<Op, number>();
    history.ops.forEach((op, i) => lines.set(op, history.lines[i]));
    report = txnReport(checker, check(history.ops, { model: consistency }), (op) => lines.get(op));
  } catch (error) {
    if (!(error instanceof HistoryError)) throw error;
    const line = error.position === undefined ? 1 : history.lines[error.position];
    return {
      file,
      format: history.format,
      valid: 'unknown',
      error: `${file}:${line}: ${error.message}${hint(history, checker)}`,
    };
  }
  if (htmlOut !== undefined) {
    await mkdir(path.dirname(path.resolve(htmlOut)), { recursive: true });
    await writeFile(htmlOut, renderTxnHtml(report, { title: file }));
  }
  return { file, format: history.format, ...report, ...(htmlOut === undefined ? {} : { html: htmlOut }) };
}

/** A transaction's micro-ops as its history spells them: EDN for an EDN history (`[[:append :x 1]]`), JSON otherwise. */
function microOpsText(value: unknown, format: HistoryFormat): string {
  return format === 'edn' || format === 'jepsen-log' || format === 'jepsen-txt'
    ? ednValue(value)
    : exactJson(value);
}

function txnLine(txn: TxnRef, format: HistoryFormat): string {
  const where = `${txn.node === undefined ? '' : `, on ${txn.node}`}${txn.line === undefined ? '' : `, line ${txn.line}`}`;
  return `${txn.name}: process ${String(txn.process)}, ${txn.type} ${txn.f} ${microOpsText(txn.value, format)}${where}`;
}

function models(list: readonly string[]): string {
  return list.length === 0 ? 'none' : list.join(', ');
}

/** The text `mallory check` prints for a transactional history. */
export function printTxnReport(report: TxnFileReport): void {
  const out: string[] = [];
  out.push(
    `${report.file}: ${report.valid ? '' : 'NOT '}${report.consistency} (${report.model}, ${report.txns} txns, ${report.elapsedMs.toFixed(1)} ms)`,
  );
  const forbidden = anomaliesForbiddenBy(report.consistency);
  for (const type of report.anomalyTypes) {
    const all = report.anomalies.filter((a) => a.type === type);
    const allowed = forbidden.has(type) ? '' : ` (allowed by ${report.consistency})`;
    for (const anomaly of all.slice(0, ANOMALIES_LISTED_PER_TYPE)) {
      out.push(`  ${anomaly.explanation}${allowed}`);
      if (anomaly.edges.length > 0) out.push(`    ${cycleLine(anomaly.edges)}`);
      for (const txn of anomaly.txns) out.push(`    ${txnLine(txn, report.format)}`);
    }
    if (all.length > ANOMALIES_LISTED_PER_TYPE)
      out.push(`  … and ${all.length - ANOMALIES_LISTED_PER_TYPE} more ${type} (--json lists them all)`);
  }
  out.push(
    `  ruled out: ${models(report.ruledOut)}${report.ruledOut.length === 0 ? '' : ' (and every stronger model)'}`,
    `  not ruled out: ${models(report.notRuledOut)}`,
  );
  if (report.html !== undefined) out.push(`  report: ${report.html}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
