import type { Guard, MicroOp, MicroOpResult, ResponseBody, StoredValue } from './messages.js';

function describe(value: StoredValue): string {
  return typeof value === 'number' ? 'a register' : 'a list';
}

/**
 * Applies a transaction's micro-ops to `kv` in order, all or nothing: `append` adds to the list at
 * its key (a missing key is an empty list), `w` sets a register, `r` reads what the key holds then
 * (the transaction's own earlier micro-ops included; `null` for nothing). An append to a register
 * or a write to a list refuses the whole transaction (definitely: nothing was applied), and so
 * does a guard not met (a key of `guard` not holding its value). The reply carries the micro-ops
 * with the reads filled in.
 */
export function applyTxn(
  kv: Map<string, StoredValue>,
  ops: readonly MicroOp[],
  guard: Guard = [],
): ResponseBody {
  for (const [key, expected] of guard) {
    const value = kv.get(key) ?? null;
    if (value !== expected) {
      return {
        ok: false,
        definite: true,
        error: `guard not met: key ${JSON.stringify(key)} holds ${JSON.stringify(value)}, not ${JSON.stringify(expected)}`,
      };
    }
  }
  const staged = new Map<string, StoredValue | undefined>();
  const current = (key: string): StoredValue | undefined => (staged.has(key) ? staged.get(key) : kv.get(key));
  const results: MicroOpResult[] = [];
  for (const op of ops) {
    const [f, key] = op;
    const held = current(key);
    if (f === 'r') {
      results.push(['r', key, held ?? null]);
      continue;
    }
    const wanted = f === 'append' ? 'a list' : 'a register';
    if (held !== undefined && describe(held) !== wanted) {
      return {
        ok: false,
        definite: true,
        error: `${f} on key ${JSON.stringify(key)}, which holds ${describe(held)}`,
      };
    }
    staged.set(key, f === 'append' ? [...((held as readonly number[] | undefined) ?? []), op[2]] : op[2]);
    results.push(op);
  }
  for (const [key, value] of staged) if (value !== undefined) kv.set(key, value);
  return { ok: true, txn: results };
}

/** A register read: the number at `key`, `null` when it holds nothing; a list is refused. */
export function readRegister(kv: ReadonlyMap<string, StoredValue>, key: string): ResponseBody {
  const value = kv.get(key);
  if (typeof value === 'object') {
    return { ok: false, definite: true, error: `read of key ${JSON.stringify(key)}, which holds a list` };
  }
  return { ok: true, value: value ?? null };
}

/** An atomic add to the register at `key` (nothing there counts 0): the new count; a list is refused. */
export function addToRegister(kv: Map<string, StoredValue>, key: string, delta: number): ResponseBody {
  const value = kv.get(key);
  if (typeof value === 'object') {
    return { ok: false, definite: true, error: `add to key ${JSON.stringify(key)}, which holds a list` };
  }
  const sum = (value ?? 0) + delta;
  kv.set(key, sum);
  return { ok: true, value: sum };
}
