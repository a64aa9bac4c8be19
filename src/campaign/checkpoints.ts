import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describeBytes } from '../core/memory-limit.js';
import type { Cluster, DataDirsCopy } from '../cluster/cluster.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import {
  CHECKPOINT_FILE,
  CHECKPOINT_INDEX,
  CHECKPOINTS_DIR,
  type CheckpointEntry,
  type CheckpointManifest,
  type CheckpointSummary,
  type DroppedCheckpoint,
  PARTIAL_SUFFIX,
} from '../store/checkpoint-files.js';

/** By default the newest schedules' checkpoints kept besides the bugs' ones. */
export const DEFAULT_CHECKPOINT_KEEP = 2;
/** By default the most all of a run's checkpoints may hold together. */
export const DEFAULT_CHECKPOINT_CAP_BYTES = 2 * 1024 ** 3;

export interface CheckpointOptions {
  readonly keep: number;
  readonly capBytes: number;
}

/** What a checkpoint records of the run besides the data dirs. */
export interface CheckpointContext {
  readonly system: string;
  readonly keysFrom: number;
  readonly takenAtMs: number;
  readonly network: CheckpointManifest['network'];
  readonly clockOffsetMs: (node: string) => number;
}

/**
 * A run's checkpoints: taken at each schedule's start, written under a `.partial` name and renamed
 * once whole (a run killed mid-copy leaves no checkpoint, only a partial dir its registry removes),
 * bounded to the newest `keep` schedules plus every schedule a bug was found in, and to a size cap.
 */
export class Checkpoints {
  private readonly root: string;
  private readonly entries: CheckpointEntry[] = [];
  private readonly dropped: DroppedCheckpoint[] = [];
  private readonly pauses: number[] = [];
  private readonly sizes: number[] = [];

  constructor(
    runDir: string,
    private readonly registry: ResourceRegistry,
    private readonly options: CheckpointOptions,
  ) {
    this.root = join(runDir, CHECKPOINTS_DIR);
  }

  /** The dir of a schedule's checkpoint. */
  dirOf(schedule: number): string {
    return join(this.root, String(schedule));
  }

  /**
   * Takes the schedule's checkpoint; returns what it dropped to stay within the bounds (the new
   * one among them when even the bugs' checkpoints leave it no room).
   */
  take(schedule: number, cluster: Cluster, ctx: CheckpointContext): readonly DroppedCheckpoint[] {
    const partial = this.begin(schedule);
    return this.finish(schedule, partial.id, cluster.copyDataDirs(partial.dir), ctx);
  }

  /**
   * `take` for nodes on other hosts (`Cluster.onHosts`): their data dirs are brought here, into
   * the same `.partial` dir renamed once whole.
   */
  async takeFromHosts(
    schedule: number,
    cluster: Cluster,
    ctx: CheckpointContext,
  ): Promise<readonly DroppedCheckpoint[]> {
    const partial = this.begin(schedule);
    return this.finish(schedule, partial.id, await cluster.copyHostDataDirs(partial.dir), ctx);
  }

  /** The schedule's `.partial` dir, recorded in the registry before it is made. */
  private begin(schedule: number): { readonly dir: string; readonly id: number } {
    const dir = this.dirOf(schedule);
    const partial = dir + PARTIAL_SUFFIX;
    mkdirSync(this.root, { recursive: true });
    const id = this.registry.record({ kind: 'dir', path: partial });
    rmSync(partial, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    return { dir: partial, id };
  }

  /** The manifest written last, the partial dir renamed, the bounds kept. */
  private finish(
    schedule: number,
    partialId: number,
    copy: DataDirsCopy,
    ctx: CheckpointContext,
  ): readonly DroppedCheckpoint[] {
    const dir = this.dirOf(schedule);
    const partial = dir + PARTIAL_SUFFIX;
    const bytes = Object.values(copy.bytes).reduce((a, b) => a + b, 0);
    const manifest: CheckpointManifest = {
      version: 1,
      system: ctx.system,
      schedule,
      keysFrom: ctx.keysFrom,
      takenAtMs: ctx.takenAtMs,
      pauseMs: round(copy.pauseMs),
      bytes,
      nodes: copy.states.map((s) => ({
        ...s,
        bytes: copy.bytes[s.node] ?? 0,
        clockOffsetMs: ctx.clockOffsetMs(s.node),
      })),
      network: ctx.network,
    };
    writeFileSync(join(partial, CHECKPOINT_FILE), JSON.stringify(manifest, null, 2) + '\n');
    renameSync(partial, dir);
    this.registry.forget(partialId);
    this.pauses.push(manifest.pauseMs);
    this.sizes.push(bytes);
    this.entries.push({ schedule, bytes, pauseMs: manifest.pauseMs, bug: false });
    const dropped = this.bound(schedule);
    this.writeIndex();
    return dropped;
  }

  /** Keeps the schedule's checkpoint whatever the count: a bug was found in it. */
  keepForBug(schedule: number): void {
    const at = this.entries.findIndex((e) => e.schedule === schedule);
    if (at >= 0) this.entries[at] = { ...this.entries[at], bug: true };
    this.writeIndex();
  }

  /** Whether the schedule's checkpoint is still kept. */
  has(schedule: number): boolean {
    return this.entries.some((e) => e.schedule === schedule);
  }

  summary(): CheckpointSummary {
    return {
      keep: this.options.keep,
      capBytes: this.options.capBytes,
      taken: this.pauses.length,
      kept: [...this.entries],
      dropped: [...this.dropped],
      bytes: this.entries.reduce((a, e) => a + e.bytes, 0),
      pauseMsMedian: median(this.pauses, round),
      pauseMsMax: this.pauses.length > 0 ? Math.max(...this.pauses) : null,
      bytesPerSchedule: median(this.sizes, Math.round),
    };
  }

  private bound(newest: number): DroppedCheckpoint[] {
    const dropped: DroppedCheckpoint[] = [];
    const drop = (entry: CheckpointEntry, reason: string): void => {
      rmSync(this.dirOf(entry.schedule), { recursive: true, force: true });
      this.entries.splice(this.entries.indexOf(entry), 1);
      const d = { schedule: entry.schedule, bytes: entry.bytes, reason };
      dropped.push(d);
      this.dropped.push(d);
    };
    const plain = this.entries.filter((e) => !e.bug);
    for (const entry of plain.slice(0, Math.max(0, plain.length - this.options.keep))) {
      drop(entry, `older than the newest ${this.options.keep} (--checkpoints)`);
    }
    const total = (): number => this.entries.reduce((a, e) => a + e.bytes, 0);
    const cap = `over the cap of ${describeBytes(this.options.capBytes)} (--checkpoint-cap)`;
    for (const entry of this.entries.filter((e) => !e.bug && e.schedule !== newest)) {
      if (total() <= this.options.capBytes) break;
      drop(entry, cap);
    }
    const current = this.entries.find((e) => e.schedule === newest);
    if (current && total() > this.options.capBytes) drop(current, cap);
    return dropped;
  }

  private writeIndex(): void {
    if (!existsSync(this.root)) return;
    writeFileSync(join(this.root, CHECKPOINT_INDEX), JSON.stringify(this.summary(), null, 2) + '\n');
  }
}

function median(values: readonly number[], rounded: (n: number) => number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return rounded(sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
