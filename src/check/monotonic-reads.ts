import { type Op, pairOps } from '../core/op.js';
import type { Counterexample } from './counterexample.js';
import { type Canonical, canonical, canonicalKey, describeCanonical } from './models/value.js';

/** How many keys a history's monotonic-read violations are reported for, at most. */
const MAX_KEYS = 10;

interface Write {
  readonly invokedAt: number;
  /** Infinity when it never answered: it may have taken effect at any time after its invoke. */
  readonly completedAt: number;
  /** The op that shows it: its completion, or its invoke when it never answered; none: initial. */
  readonly op?: Op;
}

/**
 * What sequential reads still promise beyond what the relaxed search checks: each process's reads
 * of a key never go back, and never go back before its own last update of the key (sequential
 * consistency keeps each process's own order: having written `a`, it saw `a`). A process that read
 * (or wrote) `a` and later reads `b` broke that when every write of `b` completed before any write
 * of `a` began (so `b` was overwritten, in the updates' own linearizable order, before `a`
 * existed), or when `b` is the initial value and `a` was written.
 * Judged from real time and values alone, so only where each value was written once (our
 * workloads write unique values); writes whose order real time leaves open are not judged.
 *
 * `single`: values are the register's (`register`, `cas-register`); otherwise `[key, v]` (`kv`).
 * Returns one counterexample per violating key: the two writes and the earlier read, linearized,
 * leave the state at `a`, and the later read cannot be placed after them.
 */
export function findNonMonotonicReads(
  history: readonly Op[],
  single: boolean,
  initial: unknown = null,
): Counterexample[] {
  const pairs = pairOps(history);
  const split = (value: unknown): [string | number | bigint | undefined, unknown] =>
    single
      ? [undefined, value]
      : Array.isArray(value)
        ? [canonicalKey(value[0]), value[1]]
        : [undefined, undefined];
  const keyName = (key: string | number | bigint | undefined): string => String(key);
  const writes = new Map<string, Map<Canonical, Write | null>>();
  const initialValue = canonical(initial);
  for (const { invoke, completion } of pairs) {
    if (invoke.f !== 'write' && invoke.f !== 'cas') continue;
    if (completion?.type === 'fail') continue;
    const [key, v] = split(invoke.value);
    const written = invoke.f === 'cas' ? (Array.isArray(v) ? (v as unknown[])[1] : undefined) : v;
    if (written === undefined) continue;
    const value = canonical(written);
    let byValue = writes.get(keyName(key));
    if (byValue === undefined) writes.set(keyName(key), (byValue = new Map<Canonical, Write | null>()));
    const answered = completion?.type === 'ok';
    // A value written twice (or the initial value written again) has no one time: not judged.
    byValue.set(
      value,
      byValue.has(value) || value === initialValue
        ? null
        : {
            invokedAt: invoke.time,
            completedAt: answered ? completion.time : Infinity,
            op: answered ? completion : invoke,
          },
    );
  }
  const writeOf = (key: string, value: Canonical): Write | null | undefined => {
    const found = writes.get(key)?.get(value);
    if (found !== undefined || value !== initialValue) return found;
    return { invokedAt: -Infinity, completedAt: -Infinity };
  };
  /**
   * Per process and key: the read whose value's write began last so far, or the process's own last
   * update that took effect (it saw what it wrote: sequential consistency keeps a process's order).
   */
  const newest = new Map<string, { read: Op; value: Canonical; write: Write }>();
  const found = new Map<string, Counterexample>();
  for (const { invoke, completion } of pairs) {
    if (completion?.type !== 'ok') continue;
    if (invoke.f === 'write' || invoke.f === 'cas') {
      const [key, v] = split(invoke.value);
      const written = invoke.f === 'cas' ? (Array.isArray(v) ? (v as unknown[])[1] : undefined) : v;
      if (written === undefined) continue;
      const value = canonical(written);
      const write = writeOf(keyName(key), value);
      if (write === undefined || write === null) continue;
      newest.set(`${String(invoke.process)}\u0000${keyName(key)}`, { read: completion, value, write });
      continue;
    }
    if (invoke.f !== 'read') continue;
    const [key, v] = split(completion.value);
    const name = keyName(key);
    if (found.has(name)) continue;
    const value = canonical(v);
    const write = writeOf(name, value);
    if (write === undefined || write === null) continue;
    const slot = `${String(invoke.process)}\u0000${name}`;
    const before = newest.get(slot);
    if (before !== undefined && value !== before.value && write.completedAt < before.write.invokedAt) {
      const prefix = [write.op, before.write.op, before.read].filter(
        (op, i, all): op is Op => op !== undefined && all.indexOf(op) === i,
      );
      found.set(name, {
        ...(key === undefined ? {} : { key }),
        longestPrefix: prefix,
        failingOp: completion,
        stateBefore: describeCanonical(before.value),
      });
      if (found.size >= MAX_KEYS) break;
      continue;
    }
    if (before === undefined || write.invokedAt > before.write.invokedAt)
      newest.set(slot, { read: completion, value, write });
  }
  return [...found.values()];
}
