import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

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

export interface LocalFleetOptions {
  readonly workers: number;
  /** The command that starts one worker, before `--plan FILE --index N` (e.g. `node mallory.js run`). */
  readonly workerCommand: readonly string[];
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
 * Runs the plan's unfinished campaigns on this machine, `workers` at a time, each as its own
 * `mallory run --plan FILE --index N` process (the same worker a Kubernetes Job runs), logging to
 * `<plan>/logs/<index>.log`. An abort (Ctrl-C) is passed to every worker, which stops its
 * campaign and removes what it made; the fleet then waits for them all. A later `fleet run`
 * picks up what is left.
 */
export async function runLocalFleet(plan: Plan, options: LocalFleetOptions): Promise<LocalFleetOutcome> {
  const { pending, skipped } = pendingIndices(plan);
  const queue = [...pending];
  const done: number[] = [];
  const failed: { index: number; code: number | null }[] = [];
  const left: number[] = [];
  const running = new Map<number, ChildProcess>();
  const logs = join(plan.dir, LOGS_DIR);
  mkdirSync(logs, { recursive: true });
  const total = plan.campaigns.length;
  let finishedBefore = skipped.filter((i) => readRecord(plan, i)?.status === 'done').length;
  if (skipped.length > 0) {
    options.say(
      `fleet ${plan.id}: ${skipped.length} of ${total} campaigns done or running elsewhere: not started again`,
    );
  }
  const stopAll = (): void => {
    for (const child of running.values()) child.kill('SIGINT');
  };
  options.signal.addEventListener('abort', stopAll, { once: true });
  try {
    await new Promise<void>((resolveAll) => {
      const next = (): void => {
        while (!options.signal.aborted && running.size < options.workers && queue.length > 0) {
          const index = queue.shift()!;
          // Another fleet or engine may have taken it since the queue was made.
          if (readRecord(plan, index)?.status === 'done' || liveClaim(plan, index) !== undefined) {
            skipped.push(index);
            continue;
          }
          start(index);
        }
        if (running.size === 0 && (queue.length === 0 || options.signal.aborted)) {
          left.push(...queue.splice(0));
          resolveAll();
        }
      };
      const start = (index: number): void => {
        const c = plan.campaigns[index];
        const log = openSync(join(logs, `${index}.log`), 'a');
        const [cmd, ...args] = options.workerCommand;
        const child = spawn(cmd, [...args, '--plan', plan.file, '--index', String(index)], {
          stdio: ['pipe', log, log],
          env: { ...process.env, [FLEET_WORKER_ENV]: '1' },
        });
        closeSync(log);
        running.set(index, child);
        options.say(
          `fleet ${plan.id}: start campaign ${index} (${c.group}, ${c.arm}, seed ${c.seed}) as pid ${child.pid ?? '?'}; log ${join(logs, `${index}.log`)}`,
        );
        child.on('error', (e) => {
          options.say(`fleet ${plan.id}: campaign ${index}: cannot start a worker: ${e.message}`);
        });
        child.on('close', (code) => {
          running.delete(index);
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
              `fleet ${plan.id}: campaign ${index}: worker exited ${code ?? 'on a signal'}${record?.error !== undefined ? `: ${record.error}` : ''}; see ${join(logs, `${index}.log`)}`,
            );
          }
          next();
        });
      };
      next();
    });
  } finally {
    options.signal.removeEventListener('abort', stopAll);
  }
  return { done, failed, left: left.sort((a, b) => a - b), skipped };
}
