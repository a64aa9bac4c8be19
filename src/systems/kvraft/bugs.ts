import { DEFAULT_FAULT_FAMILIES, type FaultFamily } from '../../core/fault.js';

/**
 * The bug switches of kvraft (`--bug NAME`). Each is a small deviation from correct Raft that mirrors
 * a published bug class; see README.md for the fault sequence that exposes each one.
 */
export const KVRAFT_BUGS = [
  /** The leader acknowledges a write once it is appended (and fsynced) locally, before commit. */
  'ack-before-commit',
  /** The leader serves reads from its state machine without confirming it is still leader. */
  'stale-read',
  /** A snapshot records the latest (possibly uncommitted) configuration instead of the one at its index. */
  'snapshot-uncommitted-config',
  /** Votes are granted without checking that the candidate's log is at least as up to date. */
  'vote-without-log-check',
  /** The vote is persisted only some time after the reply is sent. */
  'lazy-vote',
  /** A transaction's micro-ops are proposed one log entry each, the next once the previous applied. */
  'split-txn',
  /** Leader and followers count log entries as stored once written, and fsync the log a second later. */
  'ack-before-fsync',
  /**
   * A node added back after a wipe fails an assertion when it restarts onto what it stored since:
   * it checks its stored configuration against the bootstrap members. Only the state an earlier
   * schedule left (a node removed, then added back by the reset) exposes it.
   */
  'rejoined-restart-assert',
  /**
   * Deep: a follower that learns the leader of its current term resets its vote, as if the term
   * were new, and can vote for a second candidate in that term (etcd's raft did, fixed by
   * https://github.com/etcd-io/etcd/pull/2461; also https://github.com/camunda/camunda/pull/5368).
   * Needs two candidates in one term, a partition between them, and the second's vote request
   * reaching the voter only after the first's leader append did.
   */
  'vote-reset-same-term',
  /**
   * Deep: the leader serves reads without a round trip while it holds a lease, timing the lease
   * from when it processed each acknowledgement instead of from when the acknowledged heartbeat was
   * sent (https://github.com/apache/ratis/pull/928 times it from the send; acknowledgements
   * processed late extended the lease in https://github.com/vesoft-inc/nebula/issues/5265).
   * Needs the leader paused while acknowledgements are in flight, cut off while paused, a new
   * leader's write, and a read at the old leader just after it resumes.
   */
  'lease-read-on-receipt',
  /**
   * Deep: a new leader serves read-index reads from its commit index before it has committed an
   * entry of its own term, when that index can lag the deposed leader's
   * (https://github.com/etcd-io/etcd/issues/7331; https://github.com/tikv/tikv/pull/6340).
   * Needs the leader killed right after a commit it acknowledged and before its next heartbeat,
   * a follower behind the new leader, and a read in the new leader's first round trip.
   */
  'read-index-before-term-commit',
  /**
   * Deep: a candidate counts every granted vote, learners' too, against the number of voters
   * (a learner's vote must not count: https://github.com/tikv/raft-rs/issues/57; non-voters counted
   * in quorums: https://github.com/rabbitmq/ra/pull/427). Needs a learner that missed its own
   * removal, and a voter cut off from the other voters but not from that learner.
   */
  'learner-vote-counted',
  /**
   * Deep: a candidate counts a granted vote that answers an earlier term of its own candidacy, so
   * a delayed grant elects it in a later term its voter never voted in
   * (https://github.com/ktoso/akka-raft/issues/46; https://github.com/andreev-io/little-raft/issues/44).
   * Needs a vote reply delayed across the candidate's next timeouts, its requests cut off meanwhile,
   * and another leader committing in between.
   */
  'stale-vote-reply-counted',
  /**
   * Deep: a leader that steps down keeps its clients' writes waiting, and answers each with the
   * result of whatever entry the new leader committed at its index, without checking it is its own
   * (replication claimed successful for truncated entries: https://github.com/redpanda-data/redpanda/pull/3003).
   * Needs the leader cut off with a write in flight, an election, and the partition healed before
   * the write times out (2 s).
   */
  'ack-overwritten-entry',
  /**
   * Storage: the node replaces `meta.json`, `snapshot.json` and a rewritten log by write, fsync,
   * rename, and never fsyncs the directory, so the new names (and the log file's own creation) are
   * not durable: a power loss can take a node's whole state away, its vote and the entries it
   * acknowledged (https://github.com/baidu/braft/issues/254; fixed in
   * https://github.com/RedisLabs/redisraft/pull/548). Needs storage that keeps names only at a
   * directory fsync (the simulator's C3); the FUSE layer and C2 keep names at once and hide it.
   */
  'rename-without-dir-fsync',
] as const;

export type KvraftBug = (typeof KVRAFT_BUGS)[number];

export function isKvraftBug(name: string): name is KvraftBug {
  return (KVRAFT_BUGS as readonly string[]).includes(name);
}

/** What a campaign needs, besides `--bug`, to have a chance at a switch's bug. */
export interface KvraftBugNeeds {
  /** Cluster size. */
  readonly nodes: number;
  /** The workload that sees the bug. */
  readonly workload: string;
  /** Fault families to add to the default ones. */
  readonly faults: readonly FaultFamily[];
  /**
   * The simulated disks' storage contract it needs (`--sim-contract`); absent: any shows it, the
   * default C2 included. A switch that needs C3 cannot show on real processes under the FUSE layer
   * (whose rule is C2's).
   */
  readonly simContract?: 'C3';
}

const NEEDS_DEFAULT: KvraftBugNeeds = { nodes: 3, workload: 'register', faults: [] };

/**
 * Per switch (README.md names why): the configuration bug needs an uncommitted change on a
 * minority that snapshots, so five nodes; the transaction bug shows only under a transactional
 * workload; the fsync bug only when disks lose unfsynced writes.
 */
export const KVRAFT_BUG_NEEDS: Readonly<Record<KvraftBug, KvraftBugNeeds>> = {
  'ack-before-commit': NEEDS_DEFAULT,
  'stale-read': NEEDS_DEFAULT,
  'snapshot-uncommitted-config': { ...NEEDS_DEFAULT, nodes: 5 },
  'vote-without-log-check': NEEDS_DEFAULT,
  'lazy-vote': NEEDS_DEFAULT,
  'split-txn': { ...NEEDS_DEFAULT, workload: 'list-append' },
  'ack-before-fsync': { ...NEEDS_DEFAULT, faults: ['disk'] },
  'rejoined-restart-assert': NEEDS_DEFAULT,
  'vote-reset-same-term': NEEDS_DEFAULT,
  'lease-read-on-receipt': NEEDS_DEFAULT,
  'read-index-before-term-commit': NEEDS_DEFAULT,
  'learner-vote-counted': { ...NEEDS_DEFAULT, nodes: 4 },
  'stale-vote-reply-counted': NEEDS_DEFAULT,
  'ack-overwritten-entry': NEEDS_DEFAULT,
  'rename-without-dir-fsync': { ...NEEDS_DEFAULT, faults: ['disk'], simContract: 'C3' },
};

/** `mallory run` arguments for a campaign on a switch: `--bug`, `--nodes`, `--workload`, and `--faults` when it adds any. */
export function kvraftBugArgs(bug: KvraftBug): string[] {
  const needs = KVRAFT_BUG_NEEDS[bug];
  const args = ['--bug', bug, '--nodes', `${needs.nodes}`, '--workload', needs.workload];
  if (needs.faults.length > 0) args.push('--faults', [...DEFAULT_FAULT_FAMILIES, ...needs.faults].join(','));
  return args;
}

/** As `kvraftBugArgs`, for a simulated campaign (`--sim`): with the storage contract the switch needs. */
export function kvraftSimBugArgs(bug: KvraftBug): string[] {
  const contract = KVRAFT_BUG_NEEDS[bug].simContract;
  return ['--sim', ...kvraftBugArgs(bug), ...(contract !== undefined ? ['--sim-contract', contract] : [])];
}
