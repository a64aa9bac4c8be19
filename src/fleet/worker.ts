import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';

import { findingSignature } from '../campaign/finding-groups.js';
import { compareRunOf } from '../campaign/compare.js';
import type { Reporter, RunSummary } from '../campaign/reporter.js';
import { runCampaign, type RunOptions } from '../campaign/run-campaign.js';
import { campaignConfig, type Plan } from './plan.js';
import { claimIndex, type IndexRecord, readRecord, type RecordedFinding, writeRecord } from './records.js';

/** A worker's exit status: a finding is data, so a campaign that ran is 0 whatever it found. */
export { evidenceShape, findingSignature } from '../campaign/finding-groups.js';

export const WORKER_EXIT = {
  /** The campaign ran to its end (or had already): its findings are in its run. */
  done: 0,
  /** The plan, the index or the environment is wrong: a retry cannot help. */
  usage: 2,
  /** The campaign failed on its infrastructure (its run's status is `error`): a retry may help. */
  infrastructure: 3,
  /** Stopped by a signal: a rerun of the index starts it again. */
  interrupted: 130,
} as const;

/** The file in a run dir that says which plan and index it ran for. */
export const FLEET_RUN_FILE = 'fleet.json';

export interface WorkerOutcome {
  readonly code: number;
  readonly record: IndexRecord;
  /** The index had finished before: nothing ran. */
  readonly skipped: boolean;
  readonly summary?: RunSummary;
}

function findingsOf(summary: RunSummary): RecordedFinding[] {
  return summary.bugs.map((b) => ({
    kind: b.kind,
    name: b.name,
    signature: b.signature ?? findingSignature(b),
    message: b.message,
    schedule: b.schedule,
    foundAtMs: b.foundAtMs,
    dir: resolve(summary.runDir, b.dir),
    ...(b.hits !== undefined && b.hits.length > 1 ? { hits: b.hits.length } : {}),
  }));
}

/**
 * An earlier attempt's run dir, removed before the index runs again: only a dir inside the plan's
 * store, and never a finished one (a done index is not rerun).
 */
function removeUnfinished(plan: Plan, dir: string): boolean {
  const rel = relative(plan.storeDir, resolve(dir));
  if (rel.startsWith('..') || rel === '' || !existsSync(dir)) return false;
  rmSync(dir, { recursive: true, force: true });
  return true;
}

/**
 * The reporters, each method made quiet once the run dir is gone (removed under the worker: a
 * deleted store, another worker that took the index over): what they would write has nowhere to
 * go, and the worker says so in one line when the campaign ends.
 */
function quietOnceGone(reporters: readonly Reporter[], gone: () => boolean): Reporter[] {
  return reporters.map(
    (reporter) =>
      new Proxy(reporter, {
        get(target, key, receiver) {
          const value: unknown = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]): unknown => {
            try {
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            } catch (e) {
              if (gone()) return undefined;
              throw e;
            }
          };
        },
      }),
  );
}

export interface WorkerOptions extends Pick<RunOptions, 'onRegistry'> {
  readonly reporters: readonly Reporter[];
  readonly signal: AbortSignal;
  /** One line at a time, for the worker's terminal or log. */
  readonly say: (line: string) => void;
}

/**
 * Runs campaign `index` of the plan as a batch worker: once, whatever engine started it. A done
 * index is not run again; an unfinished one (a worker killed, a pod retried) is run again from
 * the start, its earlier run dir removed; a live worker on the same index is refused. A worker
 * whose claim another took over (it stalled past the stale bound) stops its campaign and leaves
 * the index's record to the new holder.
 */
export async function runPlanIndex(
  plan: Plan,
  index: number,
  options: WorkerOptions,
): Promise<WorkerOutcome> {
  const config = campaignConfig(plan, index);
  const campaign = plan.campaigns[index];
  const doneBefore = (record: IndexRecord | undefined): WorkerOutcome | undefined => {
    if (record?.status !== 'done') return undefined;
    options.say(
      `plan ${plan.id}: campaign ${index} (${campaign.group}, ${campaign.arm}, seed ${campaign.seed}) finished before, in ${record.runDir ?? '?'}: not run again`,
    );
    return { code: WORKER_EXIT.done, record, skipped: true };
  };
  const early = doneBefore(readRecord(plan, index));
  if (early !== undefined) return early;
  const taken = new AbortController();
  const claim = claimIndex(plan, index, () => {
    taken.abort();
  });
  try {
    // Read again under the claim: another worker may have finished it since.
    const before = readRecord(plan, index);
    const done = doneBefore(before);
    if (done !== undefined) return done;
    const replaced = [...(before?.replaced ?? [])];
    if (before?.runDir !== undefined && removeUnfinished(plan, before.runDir)) {
      replaced.push(before.runDir);
      options.say(
        `plan ${plan.id}: campaign ${index}: removed the unfinished run of attempt ${before.attempt} (${before.runDir})`,
      );
    }
    let record: IndexRecord = {
      index,
      status: 'running',
      attempt: (before?.attempt ?? 0) + 1,
      host: hostname(),
      pid: process.pid,
      startedAt: new Date().toISOString(),
      ...(replaced.length > 0 ? { replaced } : {}),
    };
    writeRecord(plan, record);
    /**
     * Whether the run dir this attempt made has been removed under it (gone, or made again by a
     * writer that went on: another inode, or no run.db in it).
     */
    let runDirInode: number | undefined;
    const gone = (): boolean => {
      if (record.runDir === undefined || runDirInode === undefined) return false;
      try {
        return statSync(record.runDir).ino !== runDirInode || !existsSync(join(record.runDir, 'run.db'));
      } catch {
        return true;
      }
    };
    /** Records the index, unless another worker holds it now or the plan's folder is gone. */
    const keep = (next: IndexRecord): void => {
      if (!claim.lost() && existsSync(plan.dir)) writeRecord(plan, next);
    };
    const removedUnder = (summary: RunSummary | undefined): WorkerOutcome => {
      const storeGone = !existsSync(plan.dir);
      const takenOver = !storeGone && claim.lost();
      const why = storeGone
        ? "the plan's store was removed"
        : takenOver
          ? 'another worker took the index over (this one stalled past the stale bound)'
          : 'something removed it';
      options.say(
        `plan ${plan.id}: campaign ${index}: its run dir ${record.runDir ?? '?'} was removed while it ran (${why}): nothing of this attempt is kept${takenOver ? ", the index's record left to that worker" : storeGone ? '' : '; run the index again'}`,
      );
      record = {
        ...record,
        status: 'failed',
        endedAt: new Date().toISOString(),
        error: `its run dir was removed while it ran (${why})`,
      };
      keep(record);
      return {
        code: takenOver ? WORKER_EXIT.interrupted : WORKER_EXIT.infrastructure,
        record,
        skipped: false,
        ...(summary !== undefined ? { summary } : {}),
      };
    };
    const recorder: Reporter = {
      // Said once the campaign has started: a plan this host cannot run is refused in one line.
      runStarted: ({ runDir }) => {
        options.say(
          `plan ${plan.id}: campaign ${index} of ${plan.campaigns.length} (${campaign.group}, ${campaign.arm}, seed ${campaign.seed}), attempt ${record.attempt}`,
        );
        record = { ...record, runDir };
        runDirInode = statSync(runDir).ino;
        keep(record);
        writeFileSync(
          join(runDir, FLEET_RUN_FILE),
          JSON.stringify(
            {
              plan: plan.file,
              id: plan.id,
              index,
              group: campaign.group,
              arm: campaign.arm,
              attempt: record.attempt,
            },
            null,
            2,
          ) + '\n',
        );
      },
    };
    let summary: RunSummary;
    try {
      summary = await runCampaign(config, {
        reporters: quietOnceGone([...options.reporters, recorder], gone),
        signal: AbortSignal.any([options.signal, taken.signal]),
        ...(options.onRegistry ? { onRegistry: options.onRegistry } : {}),
      });
    } catch (e) {
      if (gone()) return removedUnder(undefined);
      const error = e instanceof Error ? e.message : String(e);
      keep({ ...record, status: 'failed', endedAt: new Date().toISOString(), error });
      throw e;
    }
    if (gone()) return removedUnder(summary);
    if (claim.lost()) {
      options.say(
        `plan ${plan.id}: campaign ${index}: another worker took the index over (this one's claim went stale): stopped, its record left to that worker`,
      );
      return { code: WORKER_EXIT.interrupted, record, skipped: false, summary };
    }
    const ended = {
      ...record,
      runDir: summary.runDir,
      runStatus: summary.status,
      endedAt: new Date().toISOString(),
    };
    if (summary.status === 'complete') {
      record = {
        ...ended,
        status: 'done',
        elapsedMs: summary.elapsedMs,
        result: compareRunOf(summary, plan.timeMs),
        findings: findingsOf(summary),
      };
      writeRecord(plan, record);
      return { code: WORKER_EXIT.done, record, skipped: false, summary };
    }
    if (summary.status === 'interrupted') {
      record = { ...ended, status: 'interrupted' };
      writeRecord(plan, record);
      return { code: WORKER_EXIT.interrupted, record, skipped: false, summary };
    }
    record = { ...ended, status: 'failed', error: summary.error ?? 'the campaign ended with status error' };
    writeRecord(plan, record);
    return { code: WORKER_EXIT.infrastructure, record, skipped: false, summary };
  } finally {
    claim.release();
  }
}
