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
  /** Whether the cluster serves client requests now (used after start and after reset). */
  ready(cluster: ClusterView, signal: AbortSignal): Promise<boolean>;
  /** Stops system-wide helpers (not node processes: the cluster runtime ends those). */
  close?(): Promise<void>;
}
