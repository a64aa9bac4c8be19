import { STOP_SIGNALS, StopSignal } from '../campaign/stop-signal.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import { containClientError } from '../core/client-scope.js';
import type { RunStore } from '../store/run-store.js';
import { StoreFullError } from '../store/store-full.js';

export const EXIT_FOUND_BUG = 1;
export const EXIT_ERROR = 2;
export const EXIT_INTERRUPTED = 130;

function say(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // no terminal any more
  }
}

/** What a guarded body gets: the signal that asks it to stop, and where to report each run's parts. */
export interface Guard {
  readonly signal: AbortSignal;
  /** Each campaign reports its registry and store here, so an abrupt exit can finish them. */
  readonly onRegistry: (registry: ResourceRegistry, store: RunStore) => void;
}

/**
 * Runs campaigns under the process's signals and crash handlers: the first SIGINT/SIGTERM/SIGHUP
 * asks them to stop; a second, or an internal error, removes what the current run made, records
 * its final status and exits at once. An exception a system's client threw outside any call is
 * that client's failure, not an internal error (core/client-scope.ts).
 */
export async function guardCampaigns<T>(
  body: (guard: Guard) => Promise<T>,
  /** The exit status of an internal error or a full store (a fleet worker's says infrastructure). */
  errorCode: number = EXIT_ERROR,
): Promise<T> {
  const controller = new AbortController();
  let registry: ResourceRegistry | undefined;
  let store: RunStore | undefined;
  let interrupts = 0;
  const exitNow = (status: 'interrupted' | 'error', code: number, reason: string): void => {
    registry?.releaseResources();
    try {
      store?.finishIfRunning(status, { status, error: reason });
      registry?.removeFile();
    } catch {
      // the store is unwritable: the registry stays, so `mallory cleanup` marks the run
    }
    process.exit(code);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupts++;
    if (interrupts === 1) {
      say(`\nmallory: ${signal}: stopping (Ctrl-C again to stop at once)\n`);
      // Says which signal: node exits it caused too are then no crash (campaign/stop-signal.ts).
      controller.abort(new StopSignal(signal));
    } else {
      say(`mallory: ${signal} again: removing what the run made and stopping now\n`);
      exitNow('interrupted', EXIT_INTERRUPTED, `${signal} twice`);
    }
  };
  const onCrash = (error: unknown): void => {
    const contained = containClientError(error);
    if (contained) {
      if (contained.say !== undefined) say(`mallory: ${contained.say}\n`);
      return;
    }
    if (error instanceof StoreFullError) {
      say(`mallory: ${error.message}\n`);
      exitNow('error', errorCode, error.message);
      return;
    }
    say(
      `mallory: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    exitNow('error', errorCode, error instanceof Error ? error.message : String(error));
  };
  // A closed terminal makes writes to it fail: that must not crash the run's teardown.
  const ignore = (): void => undefined;
  process.stdout.on('error', ignore);
  process.stderr.on('error', ignore);
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  try {
    return await body({
      signal: controller.signal,
      onRegistry: (r, s) => {
        registry = r;
        store = s;
      },
    });
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  }
}
