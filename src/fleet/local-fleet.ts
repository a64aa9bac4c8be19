import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';

import { requireWritableDir } from './_internals/writable-dir.js';
import type { Plan } from './plan.js';
import { liveClaim, readRecord } from './records.js';
import { WORKER_EXIT } from './worker.js';

/**
 * Set in a worker's environment by `mallory fleet run`: the worker stops (as on SIGTERM) when its
 * stdin, a pipe from the fleet, closes — so a fleet killed outright (`kill -9`) still stops its
 * workers, and each removes what its run made.
 */
export const FLEET_WORKER_ENV = 'MALLORY_FLEET_WORKER';

export const LOGS_DIR = 'logs';

/** One worker, started somewhere: its exit code when it ends, and how to ask it to stop. */
export interface StartedWorker {
  /** Where and as what it runs, for the fleet's lines (`pid 123`, `a worker on host h1`). */
  readonly what: string;
  /** Its exit code; null when it ended on a signal (or its connection went). */
  readonly exited: Promise<number | null>;
  /** Asks it to stop its campaign (it removes what its run made, then exits 130). */
  stop(): void;
}

/**
 * A place that runs one worker at a time (this machine, or a host over SSH): starts `mallory run
 * --plan PLAN --index N` there, its output appended to `log` here. A start that fails throws.
 */
export interface WorkerSlot {
  start(index: number, log: string): Promise<StartedWorker>;
}

/** `workers` slots on this machine, each starting `workerCommand --plan FILE --index N`. */
export function localSlots(
  workers: number,
  workerCommand: readonly string[],
  planFile: string,
): WorkerSlot[] {
  const slot: WorkerSlot = {
    start(index, logFile) {
      const log = openSync(logFile, 'a');
      const [cmd, ...args] = workerCommand;
      let child: ChildProcess;
      try {
        child = spawn(cmd, [...args, '--plan', planFile, '--index', String(index)], {
          stdio: ['pipe', log, log],
          env: { ...process.env, [FLEET_WORKER_ENV]: '1' },
        });
      } finally {
        closeSync(log);
      }
      return new Promise((resolve, reject) => {
        // Before it started, an error is the start's; after, rejecting a settled promise is a no-op.
        child.on('error', reject);
        child.once('spawn', () => {
          const exited = new Promise<number | null>((done) =>
            child.once('close', (code) => {
              done(code);
            }),
          );
          resolve({ what: `pid ${child.pid ?? '?'}`, exited, stop: () => void child.kill('SIGINT') });
        });
      });
    },
  };
  return Array.from({ length: workers }, () => slot);
}

export interface FleetOptions {
  /** Where workers run: one campaign at a time in each. */
  readonly slots: readonly WorkerSlot[];
  readonly signal: AbortSignal;
  readonly say: (line: string) => void;
}

export interface LocalFleetOutcome {
  /** Indices this fleet ran to done. */
  readonly done: readonly number[];
  /** Indices whose worker failed (exit 3 or a crash), or was refused (exit 2). */
  readonly failed: readonly { readonly index: number; readonly code: number | null }[];
  /** Indices left for a later `fleet run`: not started, or stopped by an interrupt. */
  readonly left: readonly number[];
  /** Indices skipped: done before, or held by a live worker elsewhere. */
  readonly skipped: readonly number[];
}

/** The indices a fleet should start: neither done nor held by a live worker. */
export function pendingIndices(plan: Plan): { pending: number[]; skipped: number[] } {
  const pending: number[] = [];
  const skipped: number[] = [];
  for (const c of plan.campaigns) {
    if (readRecord(plan, c.index)?.status === 'done' || liveClaim(plan, c.index) !== undefined) {
      skipped.push(c.index);
    } else pending.push(c.index);
  }
  return { pending, skipped };
}

/**
 * Runs the plan's unfinished campaigns, one per free slot at a time (`localSlots`: processes on
 * this machine; or workers on SSH hosts), each the same worker a Kubernetes Job runs, its output
 * logged to `<plan>/logs/<index>.log`. An abort (Ctrl-C) asks every worker to stop, which stops
 * its campaign and removes what it made; the fleet then waits for them all. A later `fleet run`
 * picks up what is left.
 */
export async function runFleet(plan: Plan, options: FleetOptions): Promise<LocalFleetOutcome> {
  // Every worker writes its record and log here: a store it cannot write is refused before any starts.
  requireWritableDir(plan.dir, "fleet run: the plan's folder");
  const { pending, skipped } = pendingIndices(plan);
  const queue = [...pending];
  const done: number[] = [];
  const failed: { index: number; code: number | null }[] = [];
  const left: number[] = [];
  const running = new Map<number, StartedWorker>();
  const free = [...options.slots];
  let starting = 0;
  const logs = join(plan.dir, LOGS_DIR);
  requireWritableDir(logs, "fleet run: the workers' logs in");
  const total = plan.campaigns.length;
  let finishedBefore = skipped.filter((i) => readRecord(plan, i)?.status === 'done').length;
  if (skipped.length > 0) {
    options.say(
      `fleet ${plan.id}: ${skipped.length} of ${total} campaigns done or running elsewhere: not started again`,
    );
  }
  const stopAll = (): void => {
    for (const worker of running.values()) worker.stop();
  };
  options.signal.addEventListener('abort', stopAll, { once: true });
  try {
    await new Promise<void>((resolveAll) => {
      const next = (): void => {
        while (!options.signal.aborted && free.length > 0 && queue.length > 0) {
          const index = queue.shift()!;
          // Another fleet or engine may have taken it since the queue was made.
          if (readRecord(plan, index)?.status === 'done' || liveClaim(plan, index) !== undefined) {
            skipped.push(index);
            continue;
          }
          void start(index, free.shift()!);
        }
        if (running.size === 0 && starting === 0 && (queue.length === 0 || options.signal.aborted)) {
          left.push(...queue.splice(0));
          resolveAll();
        }
      };
      const start = async (index: number, slot: WorkerSlot): Promise<void> => {
        const c = plan.campaigns[index];
        const log = join(logs, `${index}.log`);
        starting++;
        let worker: StartedWorker;
        try {
          worker = await slot.start(index, log);
        } catch (error) {
          starting--;
          failed.push({ index, code: null });
          options.say(
            `fleet ${plan.id}: campaign ${index}: cannot start a worker: ${(error as Error).message}`,
          );
          free.push(slot);
          next();
          return;
        }
        starting--;
        running.set(index, worker);
        // Asked to stop while it was starting: it stops now.
        if (options.signal.aborted) worker.stop();
        options.say(
          `fleet ${plan.id}: start campaign ${index} (${c.group}, ${c.arm}, seed ${c.seed}) as ${worker.what}; log ${log}`,
        );
        const code = await worker.exited;
        running.delete(index);
        free.push(slot);
        const record = readRecord(plan, index);
        if (code === WORKER_EXIT.done && record?.status === 'done') {
          done.push(index);
          finishedBefore++;
          const found = record.findings?.length ?? 0;
          options.say(
            `fleet ${plan.id}: [${finishedBefore}/${total} done] campaign ${index}: ${found} finding${found === 1 ? '' : 's'} (${record.runDir ?? '?'})`,
          );
        } else if (
          code === WORKER_EXIT.interrupted ||
          (options.signal.aborted && code !== WORKER_EXIT.done)
        ) {
          left.push(index);
          options.say(`fleet ${plan.id}: campaign ${index}: stopped; a later \`fleet run\` runs it again`);
        } else {
          failed.push({ index, code });
          options.say(
            `fleet ${plan.id}: campaign ${index}: worker exited ${code ?? 'on a signal'}${record?.error !== undefined ? `: ${record.error}` : ''}; see ${log}`,
          );
        }
        next();
      };
      next();
    });
  } finally {
    options.signal.removeEventListener('abort', stopAll);
  }
  return { done, failed, left: left.sort((a, b) => a - b), skipped };
}
