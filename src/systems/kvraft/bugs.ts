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
] as const;

export type KvraftBug = (typeof KVRAFT_BUGS)[number];

export function isKvraftBug(name: string): name is KvraftBug {
  return (KVRAFT_BUGS as readonly string[]).includes(name);
}
