import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

import type { Durability } from '../check/durability.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import { UsageError } from '../core/errors.js';
import { FAMILY_KINDS, FAULT_FAMILIES, type FaultFamily } from '../core/fault.js';
import type { RunStore } from '../store/run-store.js';
import { readCheckpoint } from '../store/checkpoint-files.js';
import type { ReplayOf } from '../store/replay-of.js';
import { type RunConfig, RunConfigSchema } from './config.js';
import type { Reporter } from './reporter.js';
import { runCampaign } from './run-campaign.js';
import { pluginSources } from './plugin-copies.js';
import {
  BUG_SCHEDULE_FILE,
  isLet,
  readSchedule,
  readScheduleHeader,
  type ScheduleHeader,
  type ScheduleItem,
} from './schedule-file.js';

/** A bug directory, read for replay. */
export interface ReplayableBug {
  readonly dir: string;
  readonly header: ScheduleHeader;
  /** The schedule a replay runs: the hand-written one with its triggers when the bug came from one. */
  readonly scheduleFile: string;
  /** The checkpoint the header names, as an absolute path (whether it still exists or not). */
  readonly checkpoint?: string;
}

/** How a replay starts its nodes: from the bug schedule's checkpoint, or on empty data dirs. */
export type ReplayStart =
  | { readonly kind: 'checkpoint'; readonly dir: string; readonly schedule: number }
  | { readonly kind: 'fresh'; readonly reason: string }
  /** A simulated bug: its run re-run from its start, the schedules before the bug's exactly as they ran. */
  | { readonly kind: 'prefix'; readonly schedules: number };

/**
 * Where a replay of the bug starts: its schedule's checkpoint when the record names one that is
 * whole, else fresh with the reason (`--fresh`, an older record, a checkpoint dropped or unfinished).
 */
export function replayStart(bug: ReplayableBug, fresh: boolean, real = false): ReplayStart {
  if (fresh) return { kind: 'fresh', reason: '--fresh' };
  const h = bug.header;
  // In the simulator the state a schedule began in is recomputed, not copied: the run's schedules
  // before it, chosen by its policy from its seed, are the same again.
  if (h.simulated !== undefined && !real && h.campaign !== undefined)
    return { kind: 'prefix', schedules: h.schedule };
  if (h.simulated !== undefined && !real && h.schedule > 0) {
    return {
      kind: 'fresh',
      reason: `the run's first ${h.schedule} schedule(s) cannot be re-run: they were not the policy's alone (fixed files, a seeded policy or an exchange), so schedule ${h.schedule + 1} starts in a new world and may not find it`,
    };
  }
  if (bug.checkpoint === undefined) {
    return {
      kind: 'fresh',
      reason:
        'the bug record names no checkpoint (a run with --checkpoints 0, or recorded before checkpoints)',
    };
  }
  const lookup = readCheckpoint(bug.checkpoint);
  if (!lookup.found) return { kind: 'fresh', reason: `no checkpoint: ${lookup.reason}` };
  return { kind: 'checkpoint', dir: lookup.dir, schedule: lookup.manifest.schedule };
}

/** A one-line description of a replay's start, for the terminal. */
export function describeStart(start: ReplayStart): string {
  if (start.kind === 'prefix')
    return start.schedules === 0
      ? 'the run itself, from its start (the world is deterministic)'
      : `after the run's first ${start.schedules} schedule(s), re-run as they ran (the world is deterministic)`;
  return start.kind === 'checkpoint'
    ? `from the checkpoint of schedule ${start.schedule + 1} (${start.dir})`
    : `from empty data dirs (${start.reason})`;
}

function withCheckpoint(bug: Omit<ReplayableBug, 'checkpoint'>): ReplayableBug {
  const rel = bug.header.checkpoint;
  return rel === undefined ? bug : { ...bug, checkpoint: resolve(dirname(bug.scheduleFile), rel) };
}

/**
 * Reads `bugs/<id>/` of a run, or one schedule file with a header in it (such as the bug's
 * `shrunk.jsonl`); one clear error for anything that is not a replayable bug.
 */
export function readBug(path: string): ReplayableBug {
  if (existsSync(path) && statSync(path).isFile()) {
    const header = readScheduleHeader(path);
    if (header === undefined) {
      throw new UsageError(
        'not-a-bug',
        `${path} has no {"mallory": …} header line: give a bug directory or a schedule a bug record wrote`,
      );
    }
    return withCheckpoint({ dir: dirname(path), header, scheduleFile: path });
  }
  const dir = path;
  const schedule = join(dir, BUG_SCHEDULE_FILE);
  if (!existsSync(dir) || !statSync(dir).isDirectory() || !existsSync(schedule)) {
    throw new UsageError(
      'not-a-bug',
      `${dir} is not a bug directory (no schedule.jsonl): give store/<system>/<run>/bugs/<id>`,
    );
  }
  const header = readScheduleHeader(schedule);
  if (header === undefined) {
    throw new UsageError(
      'not-a-bug',
      `${schedule} has no {"mallory": …} header line (recorded before replay existed): run it with mallory run --schedule and the run's flags`,
    );
  }
  const source = join(dir, 'source-schedule.jsonl');
  return {
    ...withCheckpoint({ dir, header, scheduleFile: schedule }),
    scheduleFile: existsSync(source) ? source : schedule,
  };
}

export interface ReplayTry {
  readonly runDir: string;
  readonly reproduced: boolean;
  /** What the try found, as `kind/name`. */
  readonly found: readonly string[];
  readonly status: string;
}

export interface ReplayResult {
  readonly bugDir: string;
  readonly start: ReplayStart;
  readonly finding: ScheduleHeader['finding'];
  readonly tries: readonly ReplayTry[];
  readonly reproduced: number;
  readonly interrupted: boolean;
}

export interface ReplayOptions {
  readonly bug: ReplayableBug;
  readonly repeat: number;
  readonly store: string;
  readonly signal: AbortSignal;
  readonly reporters: readonly Reporter[];
  readonly onRegistry?: (registry: ResourceRegistry, store: RunStore) => void;
  readonly onTry?: (index: number, result: ReplayTry) => void;
  /** Settings that replace the recorded ones (`--set`): does the bug show under another setting? */
  readonly settings?: Readonly<Record<string, string>>;
  /** A durability contract to check instead of the recorded one (`--durability`). */
  readonly durability?: Durability;
  /** Ends the tries early once the answer is known (e.g. enough reproductions already). */
  readonly settled?: (reproduced: number, tried: number) => boolean;
  /** Start on empty data dirs even when the bug's schedule has a checkpoint. */
  readonly fresh?: boolean;
  /** The shrinker's candidate these tries run (their runs say `shrink`, not `replay`). */
  readonly candidate?: number;
  /** The hosts the tries run their nodes on (`--hosts` and how to reach them); absent: the bug's run's (its header), else this machine. */
  readonly hosts?: HostsSettings;
  /** Load the copies of the run's modules the bug keeps, not the files at their recorded paths. */
  readonly recordedPlugins?: boolean;
  /**
   * A simulated bug's schedule on real processes (`--real`): how a finding of the simulator is
   * confirmed where users run the system. Its cuts keep the simulated run's semantics.
   */
  readonly real?: boolean;
}

/** A run's hosts and how it reaches them (`--hosts`, `--username`, …), as its config keeps them. */
export type HostsSettings = Pick<
  RunConfig,
  'hosts' | 'sshUsername' | 'sshPrivateKey' | 'sshPort' | 'strictHostKeyChecking' | 'knownHosts'
>;

/**
 * What the `index`th try of a replay (or of a shrink's `candidate`) of `bug` is, as its run keeps
 * it: the bug's directory, and its run and id when the directory is a run's `bugs/<id>`.
 */
export function replayOf(bug: ReplayableBug, index: number, candidate?: number): ReplayOf {
  const bugDir = resolve(bug.dir);
  const id = Number(basename(bugDir));
  const inRun = basename(dirname(bugDir)) === 'bugs' && Number.isInteger(id) && id >= 0;
  return {
    kind: candidate === undefined ? 'replay' : 'shrink',
    bugDir,
    ...(inRun ? { run: dirname(dirname(bugDir)), bug: id } : {}),
    finding: { kind: bug.header.finding.kind, name: bug.header.finding.name },
    ...(candidate !== undefined ? { candidate } : {}),
    try: index,
  };
}

/**
 * Where a replay of `bug` stores its runs by default: the store its run is in (a bug at
 * `STORE/<system>/<run>/bugs/<id>`), else `./store` for a bug directory kept elsewhere.
 */
export function bugStore(bug: ReplayableBug): string {
  const of = replayOf(bug, 0);
  return of.run !== undefined ? dirname(dirname(of.run)) : 'store';
}

/** Margin on top of the schedule's own length for a replay's time budget. */
const BUDGET_MARGIN_MS = 1000;
/**
 * What a replay's budget allows for the cluster's start (and readiness) before the schedule: a run's
 * budget counts from its start, and a replay must never cut its schedule short (a fixed schedule
 * ends at its own length, so the allowance does not make a replay last longer).
 */
export const REPLAY_STARTUP_ALLOWANCE_MS = 120_000;

/**
 * The time budget of a replay of `items` under `header`: warm-up, start-up allowance, the
 * schedule's length (its steps, or its last line and one step more) and a margin.
 */
export function replayBudgetMs(
  header: Pick<ScheduleHeader, 'steps' | 'stepMs' | 'warmupMs'>,
  items: readonly { readonly atMs: number; readonly delayMs?: number }[],
): number {
  const lastAt = items.reduce((m, e) => Math.max(m, e.atMs + (e.delayMs ?? 0)), 0);
  const scheduleMs = Math.max(header.steps * header.stepMs, lastAt + header.stepMs);
  return (header.warmupMs ?? 0) + REPLAY_STARTUP_ALLOWANCE_MS + scheduleMs + BUDGET_MARGIN_MS;
}

/**
 * The fault families a schedule's faults belong to (a replay on hosts is refused for a family
 * not done there, so it enables only what its schedule does); `kill` for a schedule of none.
 */
export function scheduleFamilies(items: readonly ScheduleItem[]): FaultFamily[] {
  const kinds = new Set(items.flatMap((item) => (isLet(item) ? [] : [item.f])));
  const families = FAULT_FAMILIES.filter((family) => FAMILY_KINDS[family].some((k) => kinds.has(k)));
  return families.length > 0 ? families : ['kill'];
}

/**
 * Runs a bug's schedule again `repeat` times, each on a new cluster with the run's system, nodes,
 * bug switches, workload and seed — started from the schedule's checkpoint when there is one (see
 * `replayStart`), else on empty data dirs — and counts the tries that found the same finding (kind
 * and name).
 */
export async function replayBug(options: ReplayOptions): Promise<ReplayResult> {
  const { bug } = options;
  const h = bug.header;
  const warmupMs = h.warmupMs ?? 0;
  const items = readSchedule(bug.scheduleFile);
  const timeMs = replayBudgetMs(h, items);
  const start = replayStart(bug, options.fresh ?? false, options.real === true);
  const hosts = options.hosts ?? h.hosts;
  const modules = pluginSources(bug.dir, h.plugins ?? [], options.recordedPlugins ?? false);
  const config = RunConfigSchema.parse({
    system: modules.system ?? h.system,
    nodes: h.nodes,
    seed: h.seed,
    bugs: h.bugs,
    settings: { ...h.settings, ...options.settings },
    ...((options.durability ?? h.durability) !== undefined
      ? { durability: options.durability ?? h.durability }
      : {}),
    workload: modules.workload ?? h.workload,
    ...(h.concurrency !== undefined ? { concurrency: h.concurrency } : {}),
    rate: h.rate,
    steps: h.steps,
    stepMs: h.stepMs,
    // A simulated bug's cuts as the simulated run made them, in the world or on real processes.
    network: h.simulated?.partitions ?? h.network,
    warmupMs,
    schedule: bug.scheduleFile,
    ...(start.kind === 'checkpoint' ? { checkpoint: start.dir } : {}),
    // A simulated bug replays in a world of its run's seed, with its disks' contract: exactly.
    ...(h.simulated !== undefined
      ? options.real === true
        ? {}
        : { sim: { contract: h.simulated.contract } }
      : {}),
    store: options.store,
    timeMs,
    // On hosts (those given, else the run's, as its bug record keeps them): one node a host, the
    // fault families the schedule uses (a family not done on hosts is refused).
    ...(hosts?.hosts !== undefined
      ? {
          ...withoutUndefined(hosts),
          nodes: hosts.hosts.length,
          faults: scheduleFamilies(items),
        }
      : {}),
  });
  // After a prefix the run is the bug's own again: its configuration and budget. The bug's own
  // recorded schedule (a replay of it, a shrink's first candidate) is the policy's once more: the
  // same run, to the end of the bug's schedule. Another candidate, or a shrunk schedule, runs as a
  // file where the policy's schedule came: its lines at their recorded times, which can differ from
  // the policy's steps by the time those waited for their state. A finding of the prefix is not
  // the bug's.
  const prefix = start.kind === 'prefix' ? start.schedules : 0;
  const asRun =
    options.candidate === 0 ||
    (options.candidate === undefined && basename(bug.scheduleFile) === BUG_SCHEDULE_FILE);
  const tryConfig: RunConfig =
    start.kind === 'prefix'
      ? RunConfigSchema.parse({
          ...h.campaign,
          settings: config.settings,
          ...(config.durability !== undefined ? { durability: config.durability } : {}),
          ...(asRun
            ? { prefixSchedules: prefix + 1 }
            : { schedule: bug.scheduleFile, prefixSchedules: prefix }),
          stopOnBug: false,
          store: options.store,
        })
      : config;
  const tries: ReplayTry[] = [];
  for (let i = 0; i < options.repeat && !options.signal.aborted; i++) {
    const summary = await runCampaign(
      { ...tryConfig, replayOf: replayOf(bug, i, options.candidate) },
      {
        reporters: options.reporters,
        signal: options.signal,
        ...(options.onRegistry ? { onRegistry: options.onRegistry } : {}),
      },
    );
    if (summary.status === 'interrupted') break;
    const found = summary.bugs.map((b) => `${b.kind}/${b.name}`);
    const result: ReplayTry = {
      runDir: summary.runDir,
      reproduced: summary.bugs.some(
        (b) => b.kind === h.finding.kind && b.name === h.finding.name && b.schedule >= prefix,
      ),
      found,
      status: summary.status,
    };
    tries.push(result);
    options.onTry?.(i, result);
    if (options.settled?.(tries.filter((t) => t.reproduced).length, tries.length)) break;
  }
  return {
    bugDir: bug.dir,
    start,
    finding: h.finding,
    tries,
    reproduced: tries.filter((t) => t.reproduced).length,
    interrupted: options.signal.aborted,
  };
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
