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
};

/** `mallory run` arguments for a campaign on a switch: `--bug`, `--nodes`, `--workload`, and `--faults` when it adds any. */
export function kvraftBugArgs(bug: KvraftBug): string[] {
  const needs = KVRAFT_BUG_NEEDS[bug];
  const args = ['--bug', bug, '--nodes', `${needs.nodes}`, '--workload', needs.workload];
  if (needs.faults.length > 0) args.push('--faults', [...DEFAULT_FAULT_FAMILIES, ...needs.faults].join(','));
  return args;
}
