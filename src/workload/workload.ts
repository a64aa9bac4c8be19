import type { TxnWorkloadName } from '../systems/system.js';

/** The client workloads of `mallory run --workload`. */
export const WORKLOADS = ['register', 'list-append', 'rw-register'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

export function isTxnWorkload(name: WorkloadName): name is TxnWorkloadName {
  return name !== 'register';
}

export interface OpCounts {
  ok: number;
  fail: number;
  info: number;
}

/** Client workers that issue ops against the cluster and record them in the run's history. */
export interface Workload {
  /** Completed ops so far, by outcome. */
  readonly counts: OpCounts;
  /** Starts the workers on a fresh set of keys named after `prefix`. */
  start(prefix: string): void;
  /** Stops issuing ops and waits for those in flight (each bounded by its timeout). */
  stop(): Promise<void>;
  /** Ends in-flight waits at once (Ctrl-C). */
  interrupt(): void;
  /**
   * Jepsen's final reads: once the faults are healed and the system serves again, read every key
   * this schedule used, so a write lost after the workload stopped is seen by the check. Returns
   * how many keys were read before `deadlineMs`.
   */
  finalReads(deadlineMs: number): Promise<number>;
}
