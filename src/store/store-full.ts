import { HarnessError } from '../core/errors.js';

/** Whether `error` says the disk is full: ENOSPC from a file write, SQLITE_FULL from the database. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ENOSPC' || code === 'SQLITE_FULL';
}

/**
 * The disk under a run's store is full. A harness error, so that no code tolerating a fault's
 * failure swallows it: the run ends, its processes and namespaces removed, and keeps its registry
 * file so that `mallory cleanup`, once there is room, marks the run cut short.
 */
export class StoreFullError extends HarnessError {
  readonly code = 'store-full';
  constructor(
    readonly dir: string,
    cause: unknown,
  ) {
    super(
      `the disk under the store ${dir} is full (${(cause as { code?: string }).code ?? 'no space'}): the run was cut short; free space there (or give --store a directory on another disk), then run mallory cleanup to mark it`,
      { cause },
    );
    this.name = 'StoreFullError';
  }
}
