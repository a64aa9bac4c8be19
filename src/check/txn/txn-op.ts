import type { OpType } from '../../core/op.js';

/** A key or a value in a transactional history: kept exact (integers beyond 2^53 are bigints). */
export type TxnScalar = number | string | bigint;

/** A list-append micro-op: append `v` to the list at `k`, or read that list (`null` on invoke). */
export type ListAppendMicroOp =
  | readonly ['append', k: TxnScalar, v: TxnScalar]
  | readonly ['r', k: TxnScalar, list: readonly TxnScalar[] | null];

/** An rw-register micro-op: write `v` to `k`, or read it (`null`: never written, or on invoke). */
export type RwRegisterMicroOp =
  readonly ['w', k: TxnScalar, v: TxnScalar] | readonly ['r', k: TxnScalar, v: TxnScalar | null];

/**
 * One op of a transactional history, as Jepsen writes it: `f: 'txn'` and a list of micro-ops as the
 * value. Any `f` is taken (some histories file read-only and write-only transactions under `read`
 * and `write`): the value says what a transaction did. `Op` (src/core/op.ts) fits. An invoke is paired with the next completion of its process;
 * an invoke never completed counts as `info`. Ops of the `nemesis` process are skipped.
 */
export interface TxnOpInput {
  /** Names the transaction in explanations (`T12`); its position in the history when absent. */
  readonly index?: number;
  readonly type: OpType;
  readonly process: number | string;
  readonly f: string;
  readonly value: unknown;
}
