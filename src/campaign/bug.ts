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

/** A bug with everything needed to understand and replay it. */
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
}
