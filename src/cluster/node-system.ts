import type { Address } from './net/backend.js';

/** What a system adapter sees of the cluster it runs in. */
export interface ClusterView {
  readonly nodes: readonly string[];
  /** Nodes that are currently members (membership faults remove and re-add). */
  readonly members: readonly string[];
  dataDir(node: string): string;
  listen(node: string, service: string): Address;
  dial(from: string, to: string, service: string): Address;
  clientAddress(node: string, service: string): Address;
  /** The run's directory, for system-wide files (e.g. sentinel configs). */
  readonly runDir: string;
}

/** How to start one node process. */
export interface LaunchSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /**
   * `command` is a program built on the fuzzer's machine (an absolute path there), not one
   * installed on the hosts: on another host it runs from the same path when the host has the same
   * file there (same sha256), else from a copy uploaded under the run's dir on that host.
   */
  readonly built?: boolean;
}

export interface LaunchOptions {
  /**
   * The node is not one the cluster was bootstrapped with: it was wiped and added back (after a
   * member-add the cluster accepted), so it reaches the cluster through its peers. Its data dir is
   * empty the first time; after a kill it holds what the node wrote since, and the node must
   * restart from that, never join afresh.
   */
  readonly join: boolean;
}

/**
 * What the cluster runtime needs of a system: how to prepare, launch and probe its nodes. A
 * `SystemAdapter` is one (the runtime never sees clients, faults or checks).
 */
export interface NodeSystem {
  /** Called once before the first launch (config files etc.). */
  prepare?(cluster: ClusterView): Promise<void>;
  launch(node: string, cluster: ClusterView, options: LaunchOptions): LaunchSpec;
  /**
   * Whether the cluster serves client requests now (used after start and after reset); with what
   * it checked to decide (`Readiness`), a `no-recovery` finding shows each check's answer.
   */
  ready(cluster: ClusterView, signal: AbortSignal): Promise<boolean | Readiness>;
  /** Stops system-wide helpers (not node processes: the cluster runtime ends those). */
  close?(): Promise<void>;
}

/** One thing `ready` checked, with its answer. */
export interface ReadyCheck {
  /** The node asked; absent for a question about the whole cluster. */
  readonly node?: string;
  /** What was asked, e.g. `read`, `configuration lists every member`. */
  readonly check: string;
  readonly ok: boolean;
  /** The answer or the error, in one line. */
  readonly detail?: string;
}

/** `ready`'s answer together with what it checked (a plain boolean says only whether). */
export interface Readiness {
  readonly ready: boolean;
  readonly checks: readonly ReadyCheck[];
}

/** Whether a `ready` answer says ready. */
export function isReady(answer: boolean | Readiness): boolean {
  return typeof answer === 'boolean' ? answer : answer.ready;
}

/** One poll of `ready` while the cluster runtime waits for it. */
export interface ReadyAttempt {
  /** When it began, in ms since the wait began. */
  readonly atMs: number;
  /** How long it took. */
  readonly ms: number;
  readonly ready: boolean;
  /** What it checked, when it said (`Readiness`). */
  readonly checks?: readonly ReadyCheck[];
  /** What it threw (counted as not ready). */
  readonly error?: string;
  /** It neither resolved nor rejected within its budget, and was given up on. */
  readonly unanswered?: true;
}
