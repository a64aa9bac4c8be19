/** An error the user can fix: printed as one line, exit status 2. */
export class UsageError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'UsageError';
    this.code = code;
  }
}

/**
 * Mallory's own machinery failed — not the system under test nor a fault — e.g. the run's registry
 * could not be written. Nothing that tolerates a fault's failure may swallow it: the run stops with
 * status `error` and removes what it made.
 */
export class HarnessError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HarnessError';
  }
}

/** Rethrows `error` if it is a `HarnessError`; call first in a catch that tolerates other errors. */
export function rethrowHarness(error: unknown): void {
  if (error instanceof HarnessError) throw error;
}
