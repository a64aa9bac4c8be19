import { existsSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { UsageError } from '../core/errors.js';
import { HistoryError } from '../check/history/history-error.js';
import { parseHistoryJsonl } from '../check/history/jsonl.js';
import { ednOp, hasIndependentKeys } from '../check/history/write-edn.js';
import type { RegisterCommand } from './command.js';

interface ExportFlags {
  readonly edn?: boolean;
  readonly out?: string;
}

/** A run directory's history.jsonl, or the file itself. */
function historyFile(source: string): string {
  const file =
    existsSync(source) && statSync(source).isDirectory() ? path.join(source, 'history.jsonl') : source;
  if (!existsSync(file))
    throw new UsageError(
      'NO_HISTORY',
      `${file} does not exist: give a run directory (store/<system>/<run>) or its history.jsonl`,
    );
  return file;
}

/** `mallory export --edn RUN_DIR`: a run's history as Jepsen `history.edn`, for Jepsen and Elle tools. */
export const registerExport: RegisterCommand = (program) => {
  program
    .command('export')
    .description("write a run's history in another format (--edn: Jepsen history.edn)")
    .argument('<run>', 'a run directory (store/<system>/<run>) or a history.jsonl')
    .option(
      '--edn',
      "as Jepsen history.edn: one op map per line; the register workload's keys as jepsen.independent tuples",
    )
    .option('-o, --out <file>', 'write to this file (default: stdout)')
    .action(async (source: string, flags: ExportFlags) => {
      if (flags.edn !== true)
        throw new UsageError('NO_FORMAT', 'say which format to export: --edn (the only one so far)');
      const file = historyFile(source);
      let ops;
      try {
        ops = parseHistoryJsonl(await readFile(file, 'utf8'), file).ops;
      } catch (error) {
        if (error instanceof HistoryError) throw new UsageError(error.code, error.message);
        throw error;
      }
      const independent = hasIndependentKeys(ops);
      const text = ops.map((op) => `${ednOp(op, { independent })}\n`).join('');
      if (flags.out === undefined) process.stdout.write(text);
      else await writeFile(flags.out, text);
    });
};
