import type { Op } from '../core/op.js';

/** Why a history is not linearizable, in terms a person can follow. */
export interface Counterexample<T = Op> {
  /** The partition (key) that is not linearizable, when the model partitions the history. */
  readonly key?: string | number | bigint;
  /** The longest linearization found: ops in the order they took effect. */
  readonly longestPrefix: readonly T[];
  /** The op that cannot be placed after that prefix (its return comes before it could happen). */
  readonly failingOp: T;
  /** The model state after the prefix, described by the model. */
  readonly stateBefore: string;
}
