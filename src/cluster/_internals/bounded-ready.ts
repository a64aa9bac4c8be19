import type { ClusterView, NodeSystem, Readiness } from '../node-system.js';

/** Why a `ready()` call was given up on: it neither resolved nor rejected within its budget. */
export class ReadyDidNotAnswer extends Error {
  constructor(readonly budgetMs: number) {
    super(`ready() did not answer within ${formatSeconds(budgetMs)} s`);
    this.name = 'ReadyDidNotAnswer';
  }
}

/** Thrown when the run was aborted while a `ready()` call was still out. */
export class ReadyAborted extends Error {
  constructor() {
    super('ready() was abandoned: the run is stopping');
    this.name = 'ReadyAborted';
  }
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** How long a `ready()` call whose signal was aborted at its budget is given to answer. */
export const READY_ANSWER_GRACE_MS = 2000;

/**
 * Calls `system.ready` once, but waits at most `budgetMs` or until `signal` aborts. The call gets
 * its own signal, aborted at the budget; an adapter that retries until that signal and then says
 * why it is not ready (kvraft's does) is given `READY_ANSWER_GRACE_MS` to say it. One that ignores
 * the signal (a promise that never settles) must not hold the run, so the call is then abandoned
 * rather than awaited.
 */
export async function boundedReady(
  system: NodeSystem,
  cluster: ClusterView,
  budgetMs: number,
  signal?: AbortSignal,
): Promise<boolean | Readiness> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let grace: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const givenUp = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      grace = setTimeout(() => {
        reject(new ReadyDidNotAnswer(budgetMs));
      }, READY_ANSWER_GRACE_MS);
    }, budgetMs);
    onAbort = () => {
      controller.abort();
      reject(new ReadyAborted());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    if (signal?.aborted) throw new ReadyAborted();
    return await Promise.race([system.ready(cluster, controller.signal), givenUp]);
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
