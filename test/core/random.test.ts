import { describe, expect, it } from 'vitest';

import { Rng } from '../../src/core/random.js';

describe('Rng', () => {
  it('repeats its sequence for the same seed', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 20 }, () => a.nextU32());
    const ys = Array.from({ length: 20 }, () => b.nextU32());
    expect(xs).toEqual(ys);
  });

  it('differs across seeds and forks', () => {
    expect(new Rng(1).nextU32()).not.toBe(new Rng(2).nextU32());
    const r = new Rng(7);
    expect(r.fork('a').nextU32()).not.toBe(r.fork('b').nextU32());
    expect(r.fork('a').nextU32()).toBe(new Rng(7).fork('a').nextU32());
  });

  it('draws integers uniformly in range', () => {
    const r = new Rng(3);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[r.int(4)]++;
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
    expect(() => r.int(0)).toThrow(RangeError);
  });
});
