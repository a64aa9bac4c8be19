import type { ScheduleEntry } from '../nemesis/nemesis.js';

/**
 * `txn`: a transactional history shows anomalies the system's consistency model forbids;
 * `workload`: a workload's own checker (`check` on its definition) found its history invalid.
 */
export type BugKind =
  | 'linearizability'
  | 'txn'
  | 'set'
  | 'counter'
  | 'bank'
  | 'workload'
  | 'crash'
  | 'invariant'
  | 'recovery'
  | 'durability';

/** One schedule that found a bug: the first one recorded it, each later one is a hit of it. */
export interface BugHit {
  readonly schedule: number;
  /** ms since the run started when the schedule found it. */
  readonly foundAtMs: number;
  readonly message: string;
}

/**
 * A bug with everything needed to understand and replay it: one per root cause (signature) in a
 * run, found by the schedules its `hits` list; its schedule, evidence and files are the first hit's.
 */
export interface BugRecord {
  readonly id: number;
  readonly schedule: number;
  readonly kind: BugKind;
  readonly name: string;
  readonly message: string;
  readonly evidence: unknown;
  /** The schedule's full fault sequence, times relative to the schedule's start. */
  readonly faultSchedule: readonly ScheduleEntry[];
  readonly seed: number;
  /** ms since the run started when the bug was found. */
  readonly foundAtMs: number;
  /** The bug's files under the run dir (`bugs/<id>/`). */
  readonly dir: string;
  readonly html?: string;
  /** What makes findings one bug (`findingSignature`); absent in summaries written before. */
  readonly signature?: string;
  /** Every schedule that found it, the first (this record's) included; absent in summaries written before. */
  readonly hits?: readonly BugHit[];
  /** Found in a simulated world (`--sim`): its seed and storage contract; a replay of it is exact. */
  readonly simulated?: SimulatedBug;
}

/** Where a simulated run's bug was found: the world's seed, its disks' contract, its cuts' semantics. */
export interface SimulatedBug {
  readonly seed: number;
  readonly contract: 'C1' | 'C2' | 'C3';
  readonly partitions: 'proxy' | 'netns';
}
