/**
 * A bug of the system that is known upstream and not fixed in the version under test, declared so
 * that a campaign reports it as that issue (a note naming it, no bug record) instead of as a new
 * finding. It covers a node's crash whose quoted lines match `line`, after one of the faults
 * `after` ran on that node in the schedule, and the `no-recovery` that follows when such crashed
 * nodes are the only ones that do not serve. Anything else — another line, another fault, a node
 * that did not serve for another reason — stays a finding.
 */
export interface KnownIssue {
  /** The upstream reference, as `redis/redis#5177`. */
  readonly id: string;
  /** Where to read it. */
  readonly url?: string;
  /** What the system does, for the note. */
  readonly why: string;
  /** The fault kinds (as the schedule names them: `torn-write`) that bring it on. */
  readonly after: readonly string[];
  /** A line the node writes when it happens. */
  readonly line: RegExp;
}
