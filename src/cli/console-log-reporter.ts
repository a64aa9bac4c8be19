import { appendFileSync } from 'node:fs';
import path from 'node:path';

import type { BugRecord } from '../campaign/bug.js';
import type { Progress, Reporter, RunSummary } from '../campaign/reporter.js';
import type { FaultOutcome } from '../nemesis/nemesis.js';
import { ProgressReporter } from './progress-reporter.js';

/** The console log's name in a run's directory (Jepsen's `jepsen.log`). */
export const CONSOLE_LOG = 'mallory.log';

/**
 * What the terminal shows, as plain lines (a pipe's), appended to `<run dir>/mallory.log` line by
 * line with a synchronous write, so a run that crashes keeps what it printed up to then.
 */
export class ConsoleLogReporter implements Reporter {
  private inner: ProgressReporter | undefined;
  private file: string | undefined;

  /** The log's path, once the run has started. */
  get path(): string | undefined {
    return this.file;
  }

  runStarted(info: Parameters<NonNullable<Reporter['runStarted']>>[0]): void {
    const file = path.join(info.runDir, CONSOLE_LOG);
    this.file = file;
    this.inner = new ProgressReporter(
      {
        write: (text: string) => {
          appendFileSync(file, text);
        },
      },
      false,
    );
    this.inner.runStarted(info);
  }

  progress(p: Progress): void {
    this.inner?.progress(p);
  }

  fault(outcome: FaultOutcome, schedule: number, atMs: number, runMs: number, doneRunMs?: number): void {
    this.inner?.fault(outcome, schedule, atMs, runMs, doneRunMs);
  }

  bug(bug: BugRecord): void {
    this.inner?.bug(bug);
  }

  message(text: string): void {
    this.inner?.message(text);
  }

  runEnded(s: RunSummary): void {
    this.inner?.runEnded(s);
  }
}
