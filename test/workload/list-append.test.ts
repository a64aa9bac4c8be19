import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { Rng } from '../../src/core/random.js';
import type { MicroOp } from '../../src/systems/system.js';
import { LIST_APPEND_DEFAULTS, listAppendTxns } from '../../src/workload/list-append.js';

function take(next: () => MicroOp[], n: number): MicroOp[][] {
  return Array.from({ length: n }, next);
}

describe('list-append transactions', () => {
  it('are 1 to 4 appends and reads, reads carrying null, over keys named after the prefix', () => {
    const gen = listAppendTxns(new Rng(1), 's0');
    const txns = take(() => gen.next(), 500);
    const lengths = new Set(txns.map((t) => t.length));
    expect([...lengths].sort()).toEqual([1, 2, 3, 4]);
    for (const op of txns.flat()) {
      expect(['append', 'r']).toContain(op[0]);
      expect(op[1]).toMatch(/^s0-k\d+$/);
      if (op[0] === 'r') expect(op[2]).toBeNull();
    }
    const appends = txns.flat().filter((op) => op[0] === 'append').length;
    expect(appends / txns.flat().length).toBeGreaterThan(0.4);
    expect(appends / txns.flat().length).toBeLessThan(0.6);
  });

  it('append 1, 2, 3, … to each key and retire it after 32 appends for a fresh one', () => {
    const gen = listAppendTxns(new Rng(2), 's1');
    const ops = take(() => gen.next(), 2000).flat();
    const appended = new Map<string, number[]>();
    for (const op of ops)
      if (op[0] === 'append') appended.set(op[1], [...(appended.get(op[1]) ?? []), op[2]]);
    for (const values of appended.values()) {
      expect(values).toEqual(values.map((_, i) => i + 1));
      expect(values.length).toBeLessThanOrEqual(LIST_APPEND_DEFAULTS.writesPerKey);
    }
    const full = [...appended.values()].filter((v) => v.length === LIST_APPEND_DEFAULTS.writesPerKey);
    expect(full.length).toBeGreaterThan(20);
    // A retired key is never touched again: after its last append, no op names it.
    for (const [key, values] of appended) {
      if (values.length < LIST_APPEND_DEFAULTS.writesPerKey) continue;
      const last = ops.findIndex((op) => op[0] === 'append' && op[1] === key && op[2] === values.length);
      expect(ops.slice(last + 1).some((op) => op[1] === key)).toBe(false);
    }
    expect(gen.used).toEqual([...new Set(ops.map((op) => op[1]))].sort((a, b) => keyNo(a) - keyNo(b)));
  });

  it('keep the given number of keys in use at once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        (seed, keys, maxTxnLength, writesPerKey) => {
          const gen = listAppendTxns(new Rng(seed), 'p', { keys, maxTxnLength, writesPerKey });
          const counts = new Map<string, number>();
          const live = (): string[] => gen.used.filter((key) => (counts.get(key) ?? 0) < writesPerKey);
          expect(live()).toHaveLength(keys);
          for (let t = 0; t < 50; t++) {
            const txn = gen.next();
            expect(txn.length).toBeGreaterThanOrEqual(1);
            expect(txn.length).toBeLessThanOrEqual(maxTxnLength);
            for (const op of txn) {
              expect(gen.used).toContain(op[1]);
              if (op[0] !== 'append') continue;
              const n = (counts.get(op[1]) ?? 0) + 1;
              counts.set(op[1], n);
              expect(op[2]).toBe(n);
            }
            expect(live()).toHaveLength(keys);
          }
        },
      ),
    );
  });

  it('are the same for the same seed', () => {
    const a = listAppendTxns(new Rng(9), 's');
    const b = listAppendTxns(new Rng(9), 's');
    expect(take(() => a.next(), 100)).toEqual(take(() => b.next(), 100));
  });
});

function keyNo(key: string): number {
  return Number(key.slice(key.lastIndexOf('k') + 1));
}
