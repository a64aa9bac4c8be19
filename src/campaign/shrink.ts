import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { inMajority } from '../store/replay-record.js';
import { ddmin } from './ddmin.js';
import {
  replayBug,
  type ReplayableBug,
  type ReplayOptions,
  type ReplayStart,
  type ReplayTry,
} from './replay.js';
import { isLet, readSchedule, type ScheduleHeader, type ScheduleItem } from './schedule-file.js';

/**
 * What a replay takes, for each candidate schedule (`repeat`: tries per candidate; a candidate is
 * kept when it reproduces in a majority of them), and what the shrinker tells as it goes.
 */
export interface ShrinkOptions extends Omit<ReplayOptions, 'onTry' | 'settled'> {
  readonly onTry?: (candidate: number, index: number, result: ReplayTry) => void;
  readonly onCandidate?: (candidate: Candidate) => void;
}

/** One schedule the shrinker ran, and what came of it. */
export interface Candidate {
  /** 0 is the bug's own schedule; then in the order they were tried. */
  readonly index: number;
  readonly file: string;
  readonly faults: number;
  readonly reproduced: number;
  readonly tries: number;
  readonly kept: boolean;
}

export interface ShrinkResult {
  readonly bugDir: string;
  readonly finding: ScheduleHeader['finding'];
  readonly before: { readonly faults: number; readonly reproduced: number; readonly tries: number };
  /** Absent when the bug's own schedule did not reproduce often enough to shrink. */
  readonly after?: { readonly faults: number; readonly reproduced: number; readonly tries: number };
  /**
   * The shrunk schedule (`shrunk.jsonl` in the bug directory), replayable on its own; written only
   * when the smallest schedule reproduced in a majority of its final tries.
   */
  readonly shrunk?: string;
  /** How each try started (the bug schedule's checkpoint, or empty data dirs). */
  readonly start?: ReplayStart;
  readonly candidates: readonly Candidate[];
  readonly interrupted: boolean;
}

/**
 * The schedule file of a candidate, written to `file`: the bug's header (its checkpoint named
 * relative to the file's dir), every `let` line, and the chosen faults.
 */
function formatCandidate(
  bug: ReplayableBug,
  file: string,
  lets: readonly ScheduleItem[],
  faults: readonly ScheduleItem[],
): string {
  const header: ScheduleHeader =
    bug.checkpoint !== undefined
      ? { ...bug.header, checkpoint: relative(dirname(file), bug.checkpoint) }
      : bug.header;
  const lines = [{ mallory: header }, ...[...lets, ...faults].sort((a, b) => a.atMs - b.atMs)];
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/**
 * Shrinks a bug's schedule by delta debugging over its fault lines: a candidate is kept when its
 * replay reproduces the bug's finding (kind and name) in a majority of `repeat` tries. Every try
 * starts as a replay does (the schedule's checkpoint, unless `fresh`). First the bug's own
 * schedule is replayed `repeat` times (if it does not reproduce in a majority there is nothing to
 * shrink against); at the end the smallest schedule is replayed `repeat` times, and written as
 * the shrink only if it still reproduces in a majority. Every candidate is kept under `bugs/<id>/shrink/` as evidence; the result is
 * `bugs/<id>/shrunk.jsonl`.
 */
export async function shrinkBug(options: ShrinkOptions): Promise<ShrinkResult> {
  const { bug, repeat, signal } = options;
  const items = readSchedule(bug.scheduleFile);
  const lets = items.filter(isLet);
  const faults = items.filter((i) => !isLet(i));
  const workDir = join(bug.dir, 'shrink');
  mkdirSync(workDir, { recursive: true });
  const candidates: Candidate[] = [];
  let start: ReplayStart | undefined;

  const replay = async (chosen: readonly ScheduleItem[], early: boolean): Promise<Candidate> => {
    const index = candidates.length;
    const file = join(workDir, `${index}.jsonl`);
    writeFileSync(file, formatCandidate(bug, file, lets, chosen));
    const result = await replayBug({
      bug: { ...bug, scheduleFile: file },
      candidate: index,
      repeat,
      ...(options.fresh !== undefined ? { fresh: options.fresh } : {}),
      // A bug found on hosts is shrunk on them (the run's, unless given).
      ...(options.hosts !== undefined ? { hosts: options.hosts } : {}),
      store: options.store,
      ...(options.recordedPlugins !== undefined ? { recordedPlugins: options.recordedPlugins } : {}),
      signal,
      reporters: options.reporters,
      ...(options.onRegistry ? { onRegistry: options.onRegistry } : {}),
      onTry: (i, t) => options.onTry?.(index, i, t),
      // While searching, stop as soon as the verdict is known; the rates before and after are
      // measured in full.
      ...(early
        ? {
            settled: (ok: number, tried: number) =>
              inMajority(ok, repeat) || !inMajority(ok + repeat - tried, repeat),
          }
        : {}),
    });
    start = result.start;
    const tries = result.tries.length;
    const candidate: Candidate = {
      index,
      file,
      faults: chosen.length,
      reproduced: result.reproduced,
      tries,
      kept: !result.interrupted && inMajority(result.reproduced, early ? repeat : tries),
    };
    candidates.push(candidate);
    options.onCandidate?.(candidate);
    return candidate;
  };

  const done = (extra: Partial<ShrinkResult>): ShrinkResult => ({
    bugDir: bug.dir,
    finding: bug.header.finding,
    before: {
      faults: faults.length,
      reproduced: candidates[0]?.reproduced ?? 0,
      tries: candidates[0]?.tries ?? 0,
    },
    candidates,
    interrupted: signal.aborted,
    ...(start !== undefined ? { start } : {}),
    ...extra,
  });

  const original = await replay(faults, false);
  if (!original.kept || signal.aborted) return done({});
  // A bug that needs no fault at all says so at once.
  const none = faults.length > 0 ? await replay([], true) : original;
  const smallest =
    none.kept && faults.length > 0
      ? []
      : await ddmin(
          faults,
          async (subset) => (await replay(subset, true)).kept,
          () => signal.aborted,
        );
  if (signal.aborted) return done({});
  const final = await replay(smallest, false);
  const after = { faults: smallest.length, reproduced: final.reproduced, tries: final.tries };
  // The final check decides: a smallest schedule that lost its rate is not written as the shrink.
  if (!final.kept) return done({ after });
  const shrunk = join(bug.dir, 'shrunk.jsonl');
  writeFileSync(shrunk, formatCandidate(bug, shrunk, lets, smallest));
  return done({ after, shrunk });
}
