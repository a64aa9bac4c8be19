import { existsSync } from 'node:fs';
import path from 'node:path';

import { UsageError } from '../core/errors.js';
import { writeStoreIndex } from '../report/store-index.js';
import { writeRunReport } from '../report/write-run-report.js';
import { notARunReason } from '../store/run-reader.js';
import type { RunStatus } from '../store/run-store.js';
import type { RegisterCommand } from './command.js';
import { CONSOLE_LOG } from './console-log-reporter.js';

interface ReportFlags {
  out?: string;
  index?: boolean;
  store: string;
}

/** What a run that did not record its own end is, for the line `report` says about it. */
const CUT_SHORT: Partial<Record<RunStatus, string>> = {
  running:
    'was cut short (run.db still says running: the fuzzer stopped before recording its end; if it is not running, mallory cleanup marks it): the report shows what it recorded',
  incomplete:
    'was cut short (the fuzzer stopped before recording its end; mallory cleanup marked it incomplete): the report shows what it recorded',
};

const WHAT_TO_GIVE = 'give a run directory, store/<system>/<run> (e.g. store/latest), or --index';

/** A run.db that opens but cannot be read through (a table missing, a page torn): one line, not a trace. */
function damaged(runDir: string, e: unknown): unknown {
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return e;
  return new UsageError(
    'not-a-run',
    `report: ${path.join(runDir, 'run.db')} cannot be read through (${(e as Error).message}): the run's database is damaged`,
  );
}

export const registerReport: RegisterCommand = (program, setExit) => {
  program
    .command('report')
    .description("write a run's report.html and results.json, or (--index) a page listing the store's runs")
    .argument('[run-dir]', 'a run directory: store/<system>/<run>, or store/latest')
    .option('--out <dir>', 'where to write report.html and results.json (default: the run directory)')
    .option('--index', 'write <store>/index.html listing every run, with links to their reports')
    .option('--store <dir>', 'the store --index lists', 'store')
    .action(async (runDir: string | undefined, flags: ReportFlags) => {
      if (runDir === undefined && flags.index !== true)
        throw new UsageError('bad-args', `report: ${WHAT_TO_GIVE}`);
      if (runDir !== undefined) {
        const reason = notARunReason(runDir);
        if (reason !== undefined) throw new UsageError('not-a-run', `report: ${reason}: ${WHAT_TO_GIVE}`);
        const written = await writeRunReport(
          runDir,
          flags.out !== undefined ? { outDir: flags.out } : {},
        ).catch((e: unknown) => {
          throw damaged(runDir, e);
        });
        process.stdout.write(`${written.html}\n${written.json}\n`);
        const consoleLog = path.join(runDir, CONSOLE_LOG);
        if (existsSync(consoleLog)) process.stdout.write(`${consoleLog}\n`);
        const cutShort = CUT_SHORT[written.status];
        if (cutShort !== undefined) process.stderr.write(`mallory: report: ${runDir} ${cutShort}\n`);
      }
      if (flags.index === true) {
        if (!existsSync(flags.store)) {
          throw new UsageError(
            'bad-flag',
            `--store: ${flags.store} does not exist: give the directory runs were stored in`,
          );
        }
        const index = writeStoreIndex(flags.store);
        process.stdout.write(`${index.html} (${index.runs.length} runs)\n`);
      }
      setExit(0);
    });
};
