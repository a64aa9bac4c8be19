/** What a key holds: a register's number, or the list a transaction's appends built. */
export type StoredValue = number | readonly number[];

/** One micro-op of a transaction as the client sends it: append to a list, write a register, read. */
export type MicroOp =
  | readonly ['append', key: string, value: number]
  | readonly ['w', key: string, value: number]
  | readonly ['r', key: string, value: null];

/**
 * What a guarded transaction expects when it applies: each key holding that register value (`null`:
 * nothing); otherwise it is refused, nothing applied.
 */
export type Guard = readonly (readonly [key: string, value: number | null])[];

/** A micro-op as the reply carries it: a read's value filled in (`null`: the key holds nothing). */
export type MicroOpResult =
  | readonly ['append', key: string, value: number]
  | readonly ['w', key: string, value: number]
  | readonly ['r', key: string, value: StoredValue | null];

/**
 * A replicated command. `config` carries the full membership it switches to: the voters, and the
 * learners — members added back that get entries but neither vote nor count for a quorum until
 * they have caught up (then the leader promotes them), as etcd's learners.
 */
export type Command =
  | { readonly type: 'noop' }
  | { readonly type: 'put'; readonly key: string; readonly value: number }
  | {
      readonly type: 'cas';
      readonly key: string;
      readonly expected: number;
      readonly value: number;
    }
  /** An atomic add to the register at `key` (a missing key counts 0); replies with the new count. */
  | { readonly type: 'add'; readonly key: string; readonly delta: number }
  | { readonly type: 'config'; readonly members: readonly string[]; readonly learners?: readonly string[] }
  /**
   * A transaction: its micro-ops applied at once, in order, when the entry is applied — if its
   * guard, when it has one, holds then.
   */
  | { readonly type: 'txn'; readonly ops: readonly MicroOp[]; readonly guard?: Guard };

export interface Entry {
  readonly index: number;
  readonly term: number;
  readonly command: Command;
}

/** The state machine and configuration up to `lastIndex`, as stored and as sent to followers. */
export interface Snapshot {
  readonly lastIndex: number;
  readonly lastTerm: number;
  readonly members: readonly string[];
  readonly learners?: readonly string[];
  /** Index of the entry that introduced `members` (0 for the initial configuration). */
  readonly configIndex: number;
  readonly kv: readonly (readonly [string, StoredValue])[];
}

interface Header {
  readonly from: string;
  readonly to: string;
  readonly msg: string;
  readonly term: number;
}

export interface RequestVote extends Header {
  readonly kind: 'request-vote';
  readonly lastLogIndex: number;
  readonly lastLogTerm: number;
}

export interface RequestVoteReply extends Header {
  readonly kind: 'request-vote-reply';
  readonly granted: boolean;
}

export interface AppendEntries extends Header {
  readonly kind: 'append-entries';
  readonly prevIndex: number;
  readonly prevTerm: number;
  readonly entries: readonly Entry[];
  readonly commit: number;
  /** Heartbeat round, echoed in the reply; confirms leadership for read-index reads. */
  readonly round: number;
}

export interface AppendEntriesReply extends Header {
  readonly kind: 'append-entries-reply';
  readonly success: boolean;
  readonly matchIndex: number;
  /** On rejection: where the leader should retry from. */
  readonly conflictIndex: number;
  readonly round: number;
  /** On rejection: the follower has no log and no configuration (it was wiped): send the snapshot. */
  readonly blank?: boolean;
}

export interface InstallSnapshot extends Header {
  readonly kind: 'install-snapshot';
  readonly snapshot: Snapshot;
  readonly round: number;
}

export interface InstallSnapshotReply extends Header {
  readonly kind: 'install-snapshot-reply';
  readonly lastIndex: number;
  readonly round: number;
}

export type PeerMessage =
  | RequestVote
  | RequestVoteReply
  | AppendEntries
  | AppendEntriesReply
  | InstallSnapshot
  | InstallSnapshotReply;

/** What a message looks like before the transport stamps it with `from`, `to` and `msg`. */
export type Outgoing = PeerMessage extends infer M
  ? M extends PeerMessage
    ? Omit<M, 'from' | 'to' | 'msg'>
    : never
  : never;

/** Client protocol: one JSON object per line each way, matched by `id`. */
export type ClientRequest =
  | { readonly id: number; readonly op: 'read'; readonly key: string }
  | { readonly id: number; readonly op: 'write'; readonly key: string; readonly value: number }
  | {
      readonly id: number;
      readonly op: 'cas';
      readonly key: string;
      readonly expected: number;
      readonly value: number;
    }
  | { readonly id: number; readonly op: 'add'; readonly key: string; readonly delta: number }
  | { readonly id: number; readonly op: 'txn'; readonly ops: readonly MicroOp[]; readonly guard?: Guard }
  | { readonly id: number; readonly op: 'status' }
  | { readonly id: number; readonly op: 'add-member'; readonly node: string }
  | { readonly id: number; readonly op: 'remove-member'; readonly node: string };

/**
 * `ok: false` with `definite: true` means the operation certainly did not take effect (not leader,
 * cas mismatch); with `definite: false` its outcome is unknown.
 */
export type ClientResponse =
  | { readonly id: number; readonly ok: true; readonly value?: number | null }
  | {
      readonly id: number;
      readonly ok: false;
      readonly definite: boolean;
      readonly error: string;
      readonly leader?: string;
    }
  | { readonly id: number; readonly ok: true; readonly txn: readonly MicroOpResult[] }
  | {
      readonly id: number;
      readonly ok: true;
      readonly status: NodeStatus;
      /** The node's wall clock (`Date.now()`) when it answered: clock faults move it. */
      readonly wallMs?: number;
    };

/** A response before the server stamps it with the request's `id`. */
export type ResponseBody = ClientResponse extends infer R
  ? R extends ClientResponse
    ? Omit<R, 'id'>
    : never
  : never;

export interface NodeStatus {
  readonly id: string;
  readonly role: Role;
  readonly term: number;
  readonly leader: string | null;
  readonly commit: number;
  readonly applied: number;
  readonly lastIndex: number;
  readonly snapshotIndex: number;
  /** Every member: the voters, then the learners. */
  readonly members: readonly string[];
  readonly learners: readonly string[];
  /** Index of the entry that introduced this configuration: it is committed once `commit` reaches it. */
  readonly configIndex: number;
}

export type Role = 'follower' | 'candidate' | 'leader';
