/**
 * The reason a fault call's signal carries when the run's time budget (`--time`) was reached while
 * the call was out: the budget bounds the faults, so the call is cut short there.
 */
export class BudgetReached extends Error {
  constructor(
    /** `--time`, in ms from the run's start. */
    readonly budgetMs: number,
  ) {
    super(`cut short at the time budget (--time ${String(Math.round(budgetMs / 100) / 10)} s)`);
    this.name = 'BudgetReached';
  }
}

/** What a call raced against a signal came to: its own outcome, or the signal's reason first. */
export type Raced<T> =
  { readonly settled: true; readonly value: T } | { readonly settled: false; readonly reason: unknown };

/**
 * Waits for `call` or for `signal`, whichever comes first: a call that ignores its signal (a plugin
 * adapter's, or one that never returns) must not hold the run past it. The call is not awaited
 * further; its rejection, should it come later, is swallowed here.
 */
export function untilAborted<T>(call: Promise<T>, signal: AbortSignal): Promise<Raced<T>> {
  call.catch(() => undefined);
  if (signal.aborted) return Promise.resolve({ settled: false, reason: signal.reason as unknown });
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      resolve({ settled: false, reason: signal.reason as unknown });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve({ settled: true, value });
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** What a fault cut short says, whatever stopped it (the budget, or the run being stopped). */
export function cutMessage(reason: unknown): string {
  return reason instanceof BudgetReached ? reason.message : 'cut short: the run is stopping';
}
