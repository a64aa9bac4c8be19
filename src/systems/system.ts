import type { ReadConsistency } from '../check/sequential-reads.js';
import type { Durability } from '../check/durability.js';
import type { FailoverLoss } from '../check/failover-loss.js';
import type { RecoveryException } from './recovery-exception.js';
import type { KnownIssue } from './known-issue.js';
import type { TornGranularity } from '../core/fault.js';
import type { ConsistencyModel } from '../check/txn/consistency-model.js';
import type {
  ClusterView,
  LaunchOptions,
  LaunchSpec,
  NodeSystem,
  Readiness,
  ReadyCheck,
} from '../cluster/node-system.js';

export type { FailoverLoss, KnownIssue, RecoveryException };
export type { ClusterView, LaunchOptions, LaunchSpec, NodeSystem, Readiness, ReadyCheck };

/** The outcome of one client call: `info` when the outcome is unknown (timeout, lost connection). */
export type ClientResult = (
  | { readonly type: 'ok'; readonly value?: number | null }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'info'; readonly error: string }
) & {
  /** The node the request went to, when the client follows the leader (recorded as `Op.served`). */
  readonly served?: string;
};

/** A client connected to one node, for the key-value register workload. Every call has a timeout. */
export interface KvClient {
  read(key: string): Promise<ClientResult>;
  write(key: string, value: number): Promise<ClientResult>;
  cas(key: string, expected: number, value: number): Promise<ClientResult>;
  close(): Promise<void>;
}

/**
 * One micro-op of a transaction, as Jepsen's list-append and rw-register workloads write them:
 * append `v` to the list at `k`, write `v` to the register at `k`, or read `k` (`null` until the
 * reply fills it in: a list, a register's value, or `null` when the key holds nothing).
 */
export type MicroOp =
  | readonly ['append', k: string, v: number]
  | readonly ['w', k: string, v: number]
  | readonly ['r', k: string, v: number | readonly number[] | null];

/** The outcome of a transaction: `ok` carries its micro-ops with the reads filled in. */
export type TxnResult =
  | { readonly type: 'ok'; readonly value: readonly MicroOp[] }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'info'; readonly error: string };

/** A client that runs transactions on one node. Every call has a timeout. */
export interface TxnClient {
  /** Applies the micro-ops atomically, in order: all of them or none. */
  txn(ops: readonly MicroOp[]): Promise<TxnResult>;
  close(): Promise<void>;
}

/**
 * What a guarded transaction expects to find: each key holding that register value (`null`: the
 * key holds nothing) at the point the transaction applies.
 */
export type TxnGuard = readonly (readonly [k: string, v: number | null])[];

/** A `TxnClient` whose transactions can be guarded (a read-modify-write without a lost update). */
export interface GuardedTxnClient extends TxnClient {
  /**
   * Applies the micro-ops atomically, in order, only if every key of `guard` holds its value at
   * that point; when one does not, answers `fail` and writes nothing.
   */
  txnIf(guard: TxnGuard, ops: readonly MicroOp[]): Promise<TxnResult>;
}

/** The transactional workloads (`--workload`), by the micro-ops they use. */
export const TXN_WORKLOADS = ['list-append', 'rw-register'] as const;
export type TxnWorkloadName = (typeof TXN_WORKLOADS)[number];

/**
 * What a transactions client is opened for, passed as the last argument of
 * `TransactionsCapability.client` and `guardedClient`, so a system that stores lists and registers
 * differently (a SQL table per kind, say) knows which it is serving.
 */
export interface TxnClientContext {
  /**
   * The kind of values the transactions hold: `list-append` (lists, `append` and list reads) or
   * `rw-register` (registers, `w` and register reads).
   */
  readonly workload: TxnWorkloadName;
  /**
   * The workload that runs (`--workload`): `list-append` or `rw-register` itself, or `set` (kept
   * as lists) and `bank` (kept as registers by guarded transactions) run through transactions.
   */
  readonly runs: TxnWorkloadName | 'set' | 'bank';
}

/**
 * What a system offers that runs transactions of micro-ops: the workloads it can run, what it
 * promises about them, and its client. A system without it runs only the register workload.
 */
export interface TransactionsCapability {
  /** `list-append` needs `append` and list reads; `rw-register` needs `w` and register reads. */
  readonly workloads: readonly TxnWorkloadName[];
  /**
   * The consistency model the system promises for transactions; each schedule's history is checked
   * against it. Default `strict-serializable`.
   */
  readonly consistency?: ConsistencyModel;
  /** `context` says which workload the client serves (older adapters may leave it out). */
  client(node: string, cluster: ClusterView, timeoutMs: number, context: TxnClientContext): TxnClient;
  /**
   * A client whose transactions can be guarded (`txnIf`). A system that provides it runs the bank
   * workload through its transactions (a transfer reads both balances, then writes both guarded by
   * what it read), unless it keeps a bank of its own (`bank`).
   */
  guardedClient?(
    node: string,
    cluster: ClusterView,
    timeoutMs: number,
    context: TxnClientContext,
  ): GuardedTxnClient;
}

/**
 * A system whose cluster has a leader: faults can target it (`kill` / `pause` `leader`, a partition
 * isolating it, `member-remove` of it), and schedules record who led before each fault.
 */
export interface LeaderCapability {
  /** The node the cluster names as its leader now; undefined when there is none or no answer. */
  leader(cluster: ClusterView): Promise<string | undefined>;
}

/** A system whose membership can change while it runs (the `member` fault family). */
export interface MembershipCapability {
  /**
   * Takes a member out of the configuration; resolves once the cluster has committed that.
   * `signal` fires at the run's time budget or its stop: the call should then stop retrying and
   * throw (it is not waited for past it either way; its outcome is then reconciled by the reset).
   */
  remove(node: string, cluster: ClusterView, signal?: AbortSignal): Promise<void>;
  /**
   * Gets the cluster to accept `node` (stopped, its data dir wiped) as a member again; resolves
   * only once it has — the change is committed — and throws otherwise (no quorum, say, or an
   * outcome it cannot see). The nemesis starts the node, as a joiner, only after this resolved or
   * `configuration()` lists it: a joiner the cluster does not list is refused (etcd exits). A
   * system whose nodes add themselves when started as joiners (dqlite's `--join`) resolves once
   * the cluster can take the node now (a quorum commits). `signal`: as for `remove`.
   */
  add(node: string, cluster: ClusterView, signal?: AbortSignal): Promise<void>;
  /**
   * The members of a configuration the cluster has committed, read through a quorum (a minority
   * or a deposed leader cannot answer alone); undefined when it cannot tell. A membership change
   * whose call failed may still have taken effect: the nemesis reconciles with this when given.
   */
  configuration?(cluster: ClusterView): Promise<readonly string[] | undefined>;
  /**
   * Changes commit through a majority of the members (Raft and its kin). Then, while a majority of
   * them is killed or paused, the nemesis skips `member-remove` and `member-add` at once, saying
   * why, instead of waiting out the calls' timeouts (half a minute of a step, on etcd).
   */
  readonly quorum?: boolean;
}

/** The outcome of a set read: `ok` carries every element the set holds (any order). */
export type SetReadResult =
  | { readonly type: 'ok'; readonly value: readonly number[] }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'info'; readonly error: string };

/** A client of one node for the set workload (Jepsen's set: add an element, read them all). */
export interface SetClient {
  /** Adds `element` to the set at `key` (a missing key is an empty set). */
  add(key: string, element: number): Promise<ClientResult>;
  read(key: string): Promise<SetReadResult>;
  close(): Promise<void>;
}

/**
 * What a system offers that keeps sets (`--workload set`). A system without it that runs
 * `list-append` transactions runs the set workload through them (an add is one append, a read one
 * list read).
 */
export interface SetCapability {
  client(node: string, cluster: ClusterView, timeoutMs: number): SetClient;
}

/** A client of one node for the counter workload. */
export interface CounterClient {
  /** Adds `delta` (positive) to the counter at `key` atomically (a missing key counts 0). */
  add(key: string, delta: number): Promise<ClientResult>;
  /** The counter's value in `value` (0 or `null` when the key holds nothing). */
  read(key: string): Promise<ClientResult>;
  close(): Promise<void>;
}

/** What a system offers that keeps counters with an atomic add (`--workload counter`). */
export interface CounterCapability {
  client(node: string, cluster: ClusterView, timeoutMs: number): CounterClient;
}

/**
 * One bank of the bank workload: its accounts (keys) and the balance each holds before any
 * transfer (an account never written holds it), so a bank needs no setup step that could fail.
 */
export interface Bank {
  readonly accounts: readonly string[];
  readonly openingBalance: number;
}

/** The outcome of a bank read: `ok` carries every account's balance, by account. */
export type BankReadResult =
  | { readonly type: 'ok'; readonly value: Readonly<Record<string, number | null>> }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'info'; readonly error: string };

/** A client of one node for the bank workload (Jepsen's bank: transfers and whole-bank reads). */
export interface BankClient {
  /**
   * Moves `amount` (positive) from account `from` to account `to` in one transaction; `fail`, with
   * nothing moved, when `from` holds less than `amount`.
   */
  transfer(from: string, to: string, amount: number): Promise<ClientResult>;
  /** Every account's balance, read in one transaction. */
  read(): Promise<BankReadResult>;
  close(): Promise<void>;
}

/**
 * What a system offers that keeps a bank of its own (`--workload bank`), such as a SQL table. A
 * system without it whose transactions can be guarded (`transactions.guardedClient`) runs the bank
 * workload through them.
 */
export interface BankCapability {
  client(node: string, cluster: ClusterView, timeoutMs: number, bank: Bank): BankClient;
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

/** One system under test, as the campaign drives it (the cluster runtime sees only its `NodeSystem` part). */
export interface SystemAdapter extends NodeSystem {
  readonly name: string;
  /** Services each node exposes; `peerServices` are the ones nodes use to talk to each other. */
  readonly services: readonly string[];
  readonly peerServices: readonly string[];
  /** A leader the cluster can name (Jepsen's `Primary`): `leader` targets and partitions. */
  readonly leadership?: LeaderCapability;
  /** Membership changes: the `member` fault family. */
  readonly membership?: MembershipCapability;
  /**
   * Whether `client().cas` is implemented (default true). When false, `cas` answers `fail` without
   * touching the system, and the workload should generate only reads and writes.
   */
  readonly supportsCas?: boolean;
  /**
   * Whether the nodes read the wall clock through libc, so a preloaded libfaketime moves it and
   * clock faults apply (default false: Go binaries read it through the vDSO and are not moved).
   */
  readonly clockFaults?: boolean;
  /**
   * Whether the system takes disk faults (default false): its nodes keep all their data in
   * `dataDir(node)`, which a run with disk faults mounts the FUSE disk layer over, and restart
   * from what the layer kept there.
   */
  readonly diskFaults?: boolean;
  /**
   * How finely a `torn-write` may cut this system's writes (default `sector`: whole sectors, the
   * contract most write-ahead logs assume); `byte` when it declares it tolerates a sector split.
   * `--torn-writes` overrides it.
   */
  readonly tornWrites?: TornGranularity;
  /**
   * Preferred TCP port per service. A backend that gives each node its own address (netns) can use
   * them as they are; one that shares an address (proxy) picks its own.
   */
  readonly ports?: Readonly<Record<string, number>>;
  /** Crash text in a node's output (assertions, panics, sanitizers). */
  readonly crashPatterns: readonly RegExp[];
  /**
   * Output by which a node says it stops because of its membership: a joiner refusing the
   * configuration it was started with (its peers do not list it, or cannot be reached), a member
   * told it was removed. Membership is the harness's doing, so the exit that follows is never a
   * finding (the run's history records it). Only text that nothing else makes a node print.
   */
  readonly membershipExitPatterns?: readonly RegExp[];
  /** Checks the binaries this system needs. */
  doctor(): Promise<readonly DoctorFinding[]>;
  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient;
  /**
   * What the register workload's reads promise (default `linearizable`): `sequential` when reads are
   * served without a sync (by followers, from a replica's state) and may be stale; each schedule is
   * then checked for that, so documented stale reads are not reported and a lost write still is.
   */
  readonly readConsistency?: ReadConsistency;
  /**
   * What an acknowledged write survives (see `Durability`); a lost write after faults within it
   * breaks the contract (`durability/broken-contract`), after faults beyond it is a note, not a
   * bug. Undeclared: no acknowledged write may ever be lost.
   */
  readonly durability?: Durability;
  /**
   * Acknowledged writes a change of leader may lose (replication that acknowledges before a replica
   * has the write), and the parsed log events (`parseLog`) by which a node says the leader changed.
   * A lost write, or a read of an older value, whose ops span such an event is allowed by this
   * declared durability: a note in the history and on the terminal, no bug. The same loss with no
   * such event in its span stays a finding. Undeclared: a leader change loses nothing.
   */
  readonly failoverLoss?: FailoverLoss;
  /**
   * Exceptions to the recovery contract: states the system is documented to stay in after a fault
   * is healed, until an operator acts (see `RecoveryException`). A `no-recovery` in one is expected,
   * a note, not a bug; none declared: every `no-recovery` is a finding.
   */
  readonly recoveryExceptions?: readonly RecoveryException[];
  /**
   * Bugs of the system known upstream and open in the version under test (see `KnownIssue`): a
   * crash one explains, and the `no-recovery` it alone causes, are notes naming the issue, not new
   * findings. None declared: every crash is a finding.
   */
  readonly knownIssues?: readonly KnownIssue[];
  /**
   * How long the system is documented to take to serve again once every fault is healed, when
   * longer than Mallory's default bound (30 s): the recovery bound of a run without
   * `--recovery-timeout`.
   */
  readonly recoveryTimeoutMs?: number;
  /** Transactions of micro-ops (`--workload list-append|rw-register`); absent: register only. */
  readonly transactions?: TransactionsCapability;
  /** Sets (`--workload set`); absent: the set workload runs through `list-append` transactions, if any. */
  readonly sets?: SetCapability;
  /** Counters with an atomic add (`--workload counter`); absent: no counter workload. */
  readonly counters?: CounterCapability;
  /**
   * A bank (`--workload bank`); absent: the bank workload runs through guarded transactions
   * (`transactions.guardedClient`), if any.
   */
  readonly bank?: BankCapability;
  /** Per-system log parser: known internal events with numeric attributes. */
  parseLog?(line: string): ParsedLogEvent | undefined;
}

export interface SystemOptions {
  readonly bugs: readonly string[];
  /**
   * Every setting the definition declares, at the value the run chose (`--set NAME=VALUE`) or its
   * default. A campaign always passes them; absent (a test's own call), the defaults apply.
   */
  readonly settings?: Readonly<Record<string, string>>;
  /** Nodes in the cluster (what a system promises may depend on it); absent: `defaultNodes`. */
  readonly nodes?: number;
}

/**
 * A setting of a system (`--set NAME=VALUE`): one of a few named values, such as Redis's
 * `appendfsync`. Passed to `create`, recorded with the run and with every bug, so a replay runs
 * the system as it was found.
 */
export interface SystemSetting {
  /** The values it takes. */
  readonly values: readonly string[];
  /** One of `values`: what a run that does not set it gets. */
  readonly default: string;
  /** One line: what it changes. */
  readonly doc: string;
}

export interface SystemDefinition {
  readonly name: string;
  readonly defaultNodes: number;
  /** Bug switches this system has (`--bug NAME`). */
  readonly bugs: readonly string[];
  /** Settings a run can choose (`--set NAME=VALUE`), by name; none when absent. */
  readonly settings?: Readonly<Record<string, SystemSetting>>;
  create(options: SystemOptions): SystemAdapter;
}
