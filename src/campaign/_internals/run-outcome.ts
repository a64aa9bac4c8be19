import { UsageError } from '../../core/errors.js';
import { StoreFullError } from '../../store/store-full.js';
import type { RunSummary } from '../reporter.js';
import { Interrupted } from './interrupted.js';

/** How a run ended. */
export interface RunOutcome {
  readonly status: RunSummary['status'];
  /** The error it ended on, as the summary says it. */
  readonly error?: string;
  /** An error for the user to fix: thrown again once the run is stored. */
  readonly usageError?: UsageError;
  /** The disk under the store filled up: the run is left for `mallory cleanup` to mark, and this thrown. */
  readonly storeFull?: StoreFullError;
}

/** How a run that threw `e` ended: interrupted, or on an error. */
export function outcomeOf(e: unknown): RunOutcome {
  if (e instanceof Interrupted) return { status: 'interrupted' };
  return {
    status: 'error',
    error: e instanceof Error ? e.message : String(e),
    ...(e instanceof UsageError ? { usageError: e } : {}),
    ...(e instanceof StoreFullError ? { storeFull: e } : {}),
  };
}
