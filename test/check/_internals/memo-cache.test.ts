import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { LinearizedSet } from '../../../src/check/_internals/linearized-set.js';
import { MemoCache } from '../../../src/check/_internals/memo-cache.js';

describe('MemoCache', () => {
  it('finds a configuration again however the set was reached', () => {
    const cache = new MemoCache();
    const set = new LinearizedSet(100, 2);
    for (const bit of [0, 1, 2, 40, 70]) set.add(bit);
    expect(cache.add(set, 0)).toBe(true);
    expect(cache.add(set, 0)).toBe(false);
    expect(cache.add(set, 1)).toBe(true);
    set.add(3);
    expect(cache.add(set, 0)).toBe(true);
    set.remove(3);
    set.remove(40);
    set.add(40);
    expect(cache.add(set, 0)).toBe(false);
  });

  it('skips a configuration with more info ops than one already seen (dominance), not one with fewer', () => {
    const cache = new MemoCache();
    const set = new LinearizedSet(10, 3);
    set.add(0);
    set.addInfo(1);
    expect(cache.add(set, 0)).toBe(true);
    set.addInfo(2);
    expect(cache.add(set, 0)).toBe(false);
    set.removeInfo(2);
    set.removeInfo(1);
    expect(cache.add(set, 0)).toBe(true);
    set.addInfo(0);
    expect(cache.add(set, 0)).toBe(false);
    set.removeInfo(0);
    set.addInfo(1);
    set.addInfo(1);
    expect(cache.add(set, 0)).toBe(false);
  });

  it('a cache made after another was released starts empty, though it reuses its arrays', () => {
    const set = new LinearizedSet(64, 2);
    const first = new MemoCache();
    for (let bit = 0; bit < 40; bit++) {
      set.add(bit);
      expect(first.add(set, bit % 3)).toBe(true);
    }
    set.addInfo(1);
    expect(first.add(set, 5)).toBe(true);
    first.release();
    const second = new MemoCache();
    expect(second.size).toBe(0);
    expect(second.add(set, 5)).toBe(true);
    set.removeInfo(1);
    for (let bit = 39; bit >= 0; bit--) {
      expect(second.add(set, bit % 3)).toBe(true);
      expect(second.add(set, bit % 3)).toBe(false);
      set.remove(bit);
    }
  });

  it('equal sets, and only they, match: whatever the order of adds and removes', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(199)), { maxLength: 300 }), (moves) => {
        const set = new LinearizedSet(200, 0);
        const model = new Set<number>();
        const cache = new MemoCache();
        const seen = new Set<string>();
        for (const [add, bit] of moves) {
          if (add && !model.has(bit)) {
            set.add(bit);
            model.add(bit);
          } else if (!add && model.has(bit)) {
            set.remove(bit);
            model.delete(bit);
          }
          const key = [...model].sort((a, b) => a - b).join(',');
          expect(cache.add(set, 0)).toBe(!seen.has(key));
          seen.add(key);
        }
      }),
    );
  });
});
