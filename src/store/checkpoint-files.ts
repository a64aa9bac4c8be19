import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { z } from 'zod';

/** Where a run keeps its checkpoints: `<runDir>/checkpoints/<schedule>/`. */
export const CHECKPOINTS_DIR = 'checkpoints';
/** A checkpoint's manifest, written last: a dir without one is not a checkpoint. */
export const CHECKPOINT_FILE = 'checkpoint.json';
/** The run's record of its checkpoints: those kept, those dropped and why. */
export const CHECKPOINT_INDEX = 'index.json';
/** A copy is written under this suffix and renamed once whole. */
export const PARTIAL_SUFFIX = '.partial';

const NodeStateSchema = z.object({
  node: z.string(),
  status: z.enum(['running', 'paused', 'killed', 'exited', 'removed']),
  member: z.boolean(),
  joiner: z.boolean(),
  /** Where the node's data dir was: a restore moves text files that name it to the new one. */
  dataDir: z.string().optional(),
  bytes: z.number().int().nonnegative(),
  /** The node's clock offset (ms) when the checkpoint was taken. */
  clockOffsetMs: z.number(),
});

const ManifestSchema = z.object({
  version: z.literal(1),
  system: z.string(),
  schedule: z.number().int().nonnegative(),
  /**
   * The index of the key prefix its schedule's workload uses (`s<N>`): no run leading to the
   * checkpoint wrote keys under it or any later one. A run started from it numbers on from there.
   */
  keysFrom: z.number().int().nonnegative().optional(),
  /** When it was taken, in ms from the run's start. */
  takenAtMs: z.number().nonnegative(),
  /** How long the nodes were stopped for the copy. */
  pauseMs: z.number().nonnegative(),
  bytes: z.number().int().nonnegative(),
  nodes: z.array(NodeStateSchema),
  /** The addresses the data dirs may name: a replay takes the same ones where it can. */
  network: z.union([
    z.object({ kind: z.literal('netns'), subnet: z.string() }),
    /** `ports`: every node's and every link proxy's port (`ProxyBackend.addresses()`); older runs lack it. */
    z.object({ kind: z.literal('proxy'), ports: z.record(z.number().int()).optional() }),
  ]),
});

/**
 * One checkpoint: every node's data dir at the start of a schedule (the cluster healed and
 * serving), with what else a restart of the nodes reads — membership, joiner flags, clock offsets
 * and the network's addresses.
 */
export type CheckpointManifest = z.infer<typeof ManifestSchema>;

export interface CheckpointEntry {
  readonly schedule: number;
  readonly bytes: number;
  readonly pauseMs: number;
  /** A bug was found in its schedule: kept whatever the count. */
  readonly bug: boolean;
}

export interface DroppedCheckpoint {
  readonly schedule: number;
  readonly bytes: number;
  readonly reason: string;
}

/** What a run's checkpoints cost and which it kept: in `results.json` and `checkpoints/index.json`. */
export interface CheckpointSummary {
  readonly keep: number;
  readonly capBytes: number;
  readonly taken: number;
  readonly kept: readonly CheckpointEntry[];
  readonly dropped: readonly DroppedCheckpoint[];
  /** Bytes of the checkpoints kept. */
  readonly bytes: number;
  readonly pauseMsMedian: number | null;
  readonly pauseMsMax: number | null;
  readonly bytesPerSchedule: number | null;
}

/** A checkpoint to start from, or why there is none. */
export type CheckpointLookup =
  | { readonly found: true; readonly dir: string; readonly manifest: CheckpointManifest }
  | { readonly found: false; readonly reason: string };

/**
 * Reads the checkpoint in `dir`. Only a whole one counts: a dir without its manifest (a copy that
 * never finished) or with a manifest that does not parse is reported missing, with why.
 */
export function readCheckpoint(dir: string): CheckpointLookup {
  const file = join(dir, CHECKPOINT_FILE);
  if (!existsSync(dir)) {
    const index = readIndex(join(dir, '..', CHECKPOINT_INDEX));
    const schedule = Number(dir.split('/').at(-1));
    const drop = index?.dropped.find((d) => d.schedule === schedule);
    return {
      found: false,
      reason: drop !== undefined ? `${dir} was dropped: ${drop.reason}` : `${dir} does not exist`,
    };
  }
  if (!existsSync(file))
    return { found: false, reason: `${dir} has no ${CHECKPOINT_FILE} (a copy that never finished)` };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { found: false, reason: `${file} is not JSON` };
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) return { found: false, reason: `${file} is not a checkpoint manifest` };
  return { found: true, dir, manifest: parsed.data };
}

const SummarySchema = z.object({
  keep: z.number().int().nonnegative(),
  capBytes: z.number().int().positive(),
  taken: z.number().int().nonnegative(),
  kept: z.array(
    z.object({
      schedule: z.number().int().nonnegative(),
      bytes: z.number().int().nonnegative(),
      pauseMs: z.number().nonnegative(),
      bug: z.boolean(),
    }),
  ),
  dropped: z.array(
    z.object({
      schedule: z.number().int().nonnegative(),
      bytes: z.number().int().nonnegative(),
      reason: z.string(),
    }),
  ),
  bytes: z.number().int().nonnegative(),
  pauseMsMedian: z.number().nullable(),
  pauseMsMax: z.number().nullable(),
  bytesPerSchedule: z.number().nullable(),
});

/** A run's `checkpoints/index.json`, or undefined when it took none (or the file does not parse). */
export function readCheckpointIndex(runDir: string): CheckpointSummary | undefined {
  return readIndex(join(runDir, CHECKPOINTS_DIR, CHECKPOINT_INDEX));
}

function readIndex(file: string): CheckpointSummary | undefined {
  try {
    const parsed = SummarySchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

