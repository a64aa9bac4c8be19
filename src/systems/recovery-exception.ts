import type { ClusterView } from '../cluster/node-system.js';

/**
 * An exception to the recovery contract that a system declares: a state it is documented to stay
 * in once a fault is healed, serving no writes until an operator acts (Redis after a failed AOF
 * fsync). A `no-recovery` after one of `after` in the schedule, while `holds` finds the nodes in
 * that state, is expected: a note in the finding's place that says so, not a bug. Any other
 * `no-recovery` stays a finding.
 */
export interface RecoveryException {
  /** The fault kinds that put the system there (as the schedule names them: `fsync-error`). */
  readonly after: readonly string[];
  /** What the system does and where it documents it (an upstream reference), for the note. */
  readonly why: string;
  /**
   * Asks the nodes now whether they are in that state: which node and what it answered, or
   * undefined when none is (then the `no-recovery` stays a finding).
   */
  holds(cluster: ClusterView, timeoutMs: number): Promise<string | undefined>;
}
