import type { Address } from '../cluster/net/backend.js';

/** The outcome of one client call: `info` when the outcome is unknown (timeout, lost connection). */
export type ClientResult =
  | { readonly type: 'ok'; readonly value?: number | null }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'info'; readonly error: string };

/** A client connected to one node, for the key-value register workload. Every call has a timeout. */
export interface KvClient {
  read(key: string): Promise<ClientResult>;
  write(key: string, value: number): Promise<ClientResult>;
  cas(key: string, expected: number, value: number): Promise<ClientResult>;
  close(): Promise<void>;
}

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

/** A log line turned into a named internal event. */
export interface ParsedLogEvent {
  readonly type: string;
  readonly attrs?: Readonly<Record<string, number | string>>;
}

export interface DoctorFinding {
  readonly ok: boolean;
  readonly what: string;
  /** The command that fixes it, when not ok. */
  readonly fix?: string;
}

export interface LaunchOptions {
  /** Start as a new member joining an existing cluster (after member-add), with a fresh data dir. */
  readonly join: boolean;
}

/** One system under test, as the campaign drives it. */
export interface SystemAdapter {
  readonly name: string;
  /** Services each node exposes; `peerServices` are the ones nodes use to talk to each other. */
  readonly services: readonly string[];
  readonly peerServices: readonly string[];
  readonly supportsLeader: boolean;
  readonly supportsMembership: boolean;
  /**
   * Whether `client().cas` is implemented (default true). When false, `cas` answers `fail` without
   * touching the system, and the workload should generate only reads and writes.
   */
  readonly supportsCas?: boolean;
  /**
   * Preferred TCP port per service. A backend that gives each node its own address (netns) can use
   * them as they are; one that shares an address (proxy) picks its own.
   */
  readonly ports?: Readonly<Record<string, number>>;
  /** Crash text in a node's output (assertions, panics, sanitizers). */
  readonly crashPatterns: readonly RegExp[];
  /** Checks the binaries this system needs. */
  doctor(): Promise<readonly DoctorFinding[]>;
  /** Called once before the first launch (config files etc.). */
  prepare?(cluster: ClusterView): Promise<void>;
  launch(node: string, cluster: ClusterView, options: LaunchOptions): LaunchSpec;
  /** Whether the cluster serves client requests now (used after start and after reset). */
  ready(cluster: ClusterView, signal: AbortSignal): Promise<boolean>;
  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient;
  leader?(cluster: ClusterView): Promise<string | undefined>;
  memberRemove?(node: string, cluster: ClusterView): Promise<void>;
  memberAdd?(node: string, cluster: ClusterView): Promise<void>;
  /**
   * The members in the leader's configuration, if the system can tell: a membership change whose
   * call failed may still have taken effect, and the nemesis reconciles with this.
   */
  configuration?(cluster: ClusterView): Promise<readonly string[] | undefined>;
  /** Per-system log parser: known internal events with numeric attributes. */
  parseLog?(line: string): ParsedLogEvent | undefined;
  /** Stops system-wide helpers (not node processes: the cluster runtime ends those). */
  close?(): Promise<void>;
}

export interface SystemOptions {
  readonly bugs: readonly string[];
}

export interface SystemDefinition {
  readonly name: string;
  readonly defaultNodes: number;
  /** Bug switches this system has (`--bug NAME`). */
  readonly bugs: readonly string[];
  create(options: SystemOptions): SystemAdapter;
}
