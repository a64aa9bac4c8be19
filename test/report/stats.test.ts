import { describe, expect, it } from 'vitest';

import fc from 'fast-check';

import { smallestP } from '../../src/campaign/compare.js';
import { a12, mannWhitneyU, mean, median, normalSf, quantile } from '../../src/report/stats.js';

/** The two-sided p of the first sample's mid-rank sum, every arrangement of the values enumerated. */
function bruteForceP(xs: readonly number[], ys: readonly number[]): number {
  const values = [...xs, ...ys];
  const sorted = [...values].sort((a, b) => a - b);
  const midRank = (v: number): number => (sorted.indexOf(v) + sorted.lastIndexOf(v) + 2) / 2;
  const ranks = values.map(midRank);
  const observed = xs.reduce((s, x) => s + midRank(x), 0);
  let le = 0;
  let ge = 0;
  let total = 0;
  const pick = (from: number, left: number, sum: number): void => {
    if (left === 0) {
      total++;
      if (sum <= observed + 1e-9) le++;
      if (sum >= observed - 1e-9) ge++;
      return;
    }
    for (let i = from; i <= ranks.length - left; i++) pick(i + 1, left - 1, sum + ranks[i]);
  };
  pick(0, xs.length, 0);
  return Math.min(1, (2 * Math.min(le, ge)) / total);
}

// Reference p-values from scipy.stats.mannwhitneyu 1.17 (two-sided; 'exact' or 'asymptotic').
describe('stats', () => {
  it('computes mean and median', () => {
    expect(mean([1, 2, 3, 10])).toBe(4);
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(mean([])).toBeNaN();
  });

  it('gives Â12 of 1, 0 and 0.5 for dominance, inverse dominance and equality', () => {
    expect(a12([6, 7, 8], [1, 2, 3])).toBe(1);
    expect(a12([1, 2, 3], [6, 7, 8])).toBe(0);
    expect(a12([4, 4, 4], [4, 4])).toBe(0.5);
    // pairs: (3>1,3>2,3=3) (5>1,5>2,5>3) → (2.5 + 3) / 6
    expect(a12([3, 5], [1, 2, 3])).toBeCloseTo(5.5 / 6, 12);
  });

  it('matches scipy exact p-values without ties', () => {
    const a = mannWhitneyU([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]);
    expect(a.method).toBe('exact');
    expect(a.u).toBe(0);
    expect(a.p).toBeCloseTo(0.007936507936507936, 12);
    const b = mannWhitneyU([19, 22, 16, 29, 24], [20, 11, 17, 12]);
    expect(b.u).toBe(17);
    expect(b.p).toBeCloseTo(0.1111111111111111, 12);
  });

  it('gives exact permutation p-values with ties for small samples', () => {
    // Reference: every arrangement enumerated (mid-ranks), as a permutation test counts them.
    const a = mannWhitneyU([1, 2, 2, 3, 3, 3, 4], [2, 3, 4, 4, 5, 5, 6]);
    expect(a.method).toBe('exact');
    expect(a.u).toBe(8.5);
    expect(a.p).toBeCloseTo(0.05011655011655012, 12);
    expect(a.p).toBeCloseTo(bruteForceP([1, 2, 2, 3, 3, 3, 4], [2, 3, 4, 4, 5, 5, 6]), 12);
    const b = mannWhitneyU([3, 4, 2, 6, 2, 5], [9, 7, 5, 10, 6, 8]);
    expect(b.u).toBe(2);
    expect(b.p).toBeCloseTo(0.010822510822510822, 12);
  });

  it('never gives a p below the least 2 / C(n + m, n) any arrangement allows, ties or not', () => {
    // Two runs against two, tied: the normal approximation said 0.194 and 0.221 here.
    expect(mannWhitneyU([4, 4], [3, 3]).p).toBeCloseTo(smallestP(2, 2), 12);
    expect(mannWhitneyU([5, 5], [3, 4]).p).toBeCloseTo(smallestP(2, 2), 12);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 }),
        (xs, ys) => {
          const { p } = mannWhitneyU(xs, ys);
          expect(p).toBeGreaterThanOrEqual(smallestP(xs.length, ys.length) - 1e-12);
          expect(p).toBeCloseTo(bruteForceP(xs, ys), 12);
        },
      ),
    );
  });

  it('matches scipy asymptotic p-values for large samples', () => {
    const xs = Array.from({ length: 30 }, (_, i) => i);
    const ys = Array.from({ length: 25 }, (_, i) => i + 5.5);
    const c = mannWhitneyU(xs, ys);
    expect(c.method).toBe('normal');
    expect(c.u).toBe(300);
    expect(c.p).toBeCloseTo(0.20792927248164417, 5);
  });

  it('gives p = 1 for identical samples and rejects empty ones', () => {
    expect(mannWhitneyU([2, 2, 2], [2, 2, 2]).p).toBe(1);
    expect(() => mannWhitneyU([], [1])).toThrow(/non-empty/);
    expect(() => a12([1], [])).toThrow(/non-empty/);
  });

  it('has a normal tail close to known quantiles', () => {
    expect(normalSf(1.959963984540054)).toBeCloseTo(0.025, 6);
    expect(normalSf(0)).toBeCloseTo(0.5, 6);
    expect(normalSf(-1.6448536269514722)).toBeCloseTo(0.95, 6);
  });

  it('gives quantiles by linear interpolation between order statistics (numpy and R defaults)', () => {
    // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = 1.75, 2.5, 3.25
    expect(quantile([4, 1, 3, 2], 0.25)).toBeCloseTo(1.75, 12);
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(median([1, 2, 3, 4]));
    expect(quantile([4, 1, 3, 2], 0.75)).toBeCloseTo(3.25, 12);
    expect(quantile([7], 0.25)).toBe(7);
    expect(quantile([1, 9], 0)).toBe(1);
    expect(quantile([1, 9], 1)).toBe(9);
    expect(quantile([], 0.5)).toBeNaN();
    expect(() => quantile([1], 1.5)).toThrow(/\[0, 1\]/);
  });
});
