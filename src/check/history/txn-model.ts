import { isClientOp } from '../../core/op.js';
import type { ParsedHistory } from './parsed-history.js';

/** The transactional checkers `mallory check --model` can run. */
export const TXN_MODEL_NAMES = ['list-append', 'rw-register'] as const;
export type TxnModelName = (typeof TXN_MODEL_NAMES)[number];

export function isTxnModelName(name: string): name is TxnModelName {
  return (TXN_MODEL_NAMES as readonly string[]).includes(name);
}

const MICRO_OP_FS: ReadonlySet<unknown> = new Set(['append', 'r', 'w']);
const MICRO_OP_LENGTH = 3;

function isMicroOp(value: unknown): value is readonly [string, unknown, unknown] {
  return Array.isArray(value) && value.length === MICRO_OP_LENGTH && MICRO_OP_FS.has(value[0]);
}

/** A value such as `[["append", 1, 2], ["r", 1, null]]`: a non-empty list of micro-ops. */
export function isMicroOpList(value: unknown): value is readonly (readonly [string, unknown, unknown])[] {
  return Array.isArray(value) && value.length > 0 && value.every(isMicroOp);
}

/**
 * The transactional model a history means, or undefined when it is not transactional: it is when
 * a client op has `f: txn` or an Elle-style micro-op list as its value (whatever its `f`).
 * list-append when a micro-op appends or a read returns a list; rw-register otherwise.
 */
export function transactionalModel(history: ParsedHistory): TxnModelName | undefined {
  let transactional = false;
  for (const op of history.ops) {
    if (!isClientOp(op)) continue;
    const microOps = isMicroOpList(op.value);
    if (!microOps && op.f !== 'txn') continue;
    transactional = true;
    if (!microOps) continue;
    for (const [f, , value] of op.value) {
      if (f === 'append' || (f === 'r' && Array.isArray(value))) return 'list-append';
    }
  }
  return transactional ? 'rw-register' : undefined;
}
