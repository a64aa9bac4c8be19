import type { Rng } from '../core/random.js';
import {
  TXN_WORKLOADS,
  type ClusterView,
  type SystemAdapter,
  type TxnWorkloadName,
} from '../systems/system.js';
import type { History } from './history.js';
import type { WorkloadChecker } from './workload-checker.js';

/** The client workloads of `mallory run --workload`. */
export const WORKLOADS = ['register', 'list-append', 'rw-register', 'set', 'counter', 'bank'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

export function isTxnWorkload(name: WorkloadName): name is TxnWorkloadName {
  return (TXN_WORKLOADS as readonly string[]).includes(name);
}

export interface OpCounts {
  ok: number;
  /** Fails other than refused connections. */
  fail: number;
  info: number;
  /** Fails whose connection was refused (`isRefusal`: a node down), counted apart from `fail`. */
  refused?: number;
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
   * this schedule used, so a write lost after the workload stopped is seen by the check; those reads
   * are marked `final` (Jepsen's `:final? true`). Returns how many keys were read before
   * `deadlineMs`. With `untilConverged` (a system whose reads may be stale), every key is read on
   * every node until the nodes agree (unmarked: they may be stale), and then once more on each node
   * with `final` set on those ops (checked as linearizable: they must see every acknowledged write).
   */
  finalReads(deadlineMs: number, options?: FinalReadOptions): Promise<number>;
}

export interface FinalReadOptions {
  /** Read on every node until all agree, then read once more, marked `final` (see `Op.final`). */
  readonly untilConverged?: boolean;
}

/** What a workload is built from: the system's clients, the cluster, the history, its own random. */
export interface WorkloadContext {
  readonly system: SystemAdapter;
  readonly cluster: ClusterView;
  readonly history: History;
  readonly rng: Rng;
  readonly concurrency: number;
  /** Total client ops per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
}

/**
 * A pluggable workload: what it needs from a system (a client capability it names), and how it
 * is made. A system runs it by providing that capability; a run refuses at start a system that
 * does not.
 */
export interface WorkloadDefinition {
  /** A built-in's `WorkloadName`; a workload loaded by path names itself (runs and bugs say it). */
  readonly name: string;
  /**
   * What `system` lacks to run it, as a predicate after "system NAME" (`keeps no sets (…)`), or
   * undefined when it can.
   */
  unsupported(system: SystemAdapter): string | undefined;
  create(context: WorkloadContext): Workload;
  /**
   * The check of each schedule's history (required of a workload loaded by path); a built-in's
   * checker is chosen by its name (`campaign/checkers.ts`).
   */
  readonly check?: WorkloadChecker;
}
