import type { MicroOp } from '../../system.js';
import type { TxnValue } from './txn-value.js';

export type MicroOpsApplied =
  | {
      readonly ok: true;
      /** The micro-ops with their reads filled in. */
      readonly results: readonly MicroOp[];
      /** Each key the transaction wrote, once, with its final value. */
      readonly writes: ReadonlyMap<string, TxnValue>;
    }
  | { readonly ok: false; readonly error: string };

function describe(value: TxnValue): string {
  return typeof value === 'number' ? 'a register' : 'a list';
}

/**
 * Runs the micro-ops in order on a snapshot (a key absent from it holds nothing): a read sees the
 * snapshot as the transaction's own earlier writes and appends left it. An append to a register or
 * a write over a list refuses the whole transaction, as kvraft does.
 */
export function applyMicroOps(
  snapshot: ReadonlyMap<string, TxnValue>,
  ops: readonly MicroOp[],
): MicroOpsApplied {
  const writes = new Map<string, TxnValue>();
  const current = (key: string): TxnValue | undefined => writes.get(key) ?? snapshot.get(key);
  const results: MicroOp[] = [];
  for (const op of ops) {
    const held = current(op[1]);
    if (op[0] === 'r') {
      results.push(['r', op[1], held ?? null]);
      continue;
    }
    const wanted = op[0] === 'append' ? 'a list' : 'a register';
    if (held !== undefined && describe(held) !== wanted) {
      return { ok: false, error: `${op[0]} on key ${JSON.stringify(op[1])}, which holds ${describe(held)}` };
    }
    writes.set(
      op[1],
      op[0] === 'append' ? [...((held as readonly number[] | undefined) ?? []), op[2]] : op[2],
    );
    results.push(op);
  }
  return { ok: true, results, writes };
}
