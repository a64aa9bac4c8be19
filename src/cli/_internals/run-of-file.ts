import { dirname, resolve } from 'node:path';

import { notARunReason, readStoredRun } from '../../store/run-reader.js';

/** The run a file lies in, and the `--system` that run was started with. */
export interface RunOfFile {
  readonly runDir: string;
  /** The run's `--system`: a built-in's name or the path of the user's module. */
  readonly system: string;
}

/**
 * The run directory holding `file` (its nearest parent with a run's `run.db`, e.g. the run of
 * `store/kvraft/<run>/nodes/n1/stdout.log`) and the system the run recorded; undefined when the
 * file lies in no run.
 */
export function runOfFile(file: string): RunOfFile | undefined {
  let dir = dirname(resolve(file));
  for (;;) {
    if (notARunReason(dir) === undefined) {
      const { run } = readStoredRun(dir);
      const spec = run.config.system;
      return { runDir: dir, system: typeof spec === 'string' && spec !== '' ? spec : run.system };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
