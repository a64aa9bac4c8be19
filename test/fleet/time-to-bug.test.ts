import { describe, expect, it } from 'vitest';

import { type CampaignOutcome, timeToBug } from '../../src/fleet/time-to-bug.js';

const BUDGET_MS = 1_000;

function outcomes(times: readonly (number | null)[]): CampaignOutcome[] {
  return times.map((t, i) => ({ index: i, seed: i, firstFindMs: t, endMs: BUDGET_MS }));
}

describe('timeToBug', () => {
  it('gives Â12 sooner and the exact p with misses tied beyond every find', () => {
    // Policy finds at 10 and 20 and misses once; random finds at 30 and misses twice.
    // Â12 sooner: 10 and 20 each beat all 3 of random (6), the miss loses to 30 and ties 2 misses (1): 7/9.
    // Exact p: mid-ranks 10→1, 20→2, 30→3, the three misses 5 each; the policy's rank sum is 8.
    // Of the C(6,3) = 20 arrangements, sums ≤ 8: {1,2,3} and {1,2,5}×3 = 4; sums ≥ 8: 19; p = 2·4/20 = 0.4.
    const t = timeToBug(
      'ack-before-commit',
      { adaptive: outcomes([10, 20, null]), random: outcomes([30, null, null]) },
      'random',
    );

    const a = t.arms['adaptive'];
    expect(a.a12Sooner).toBeCloseTo(7 / 9, 12);
    expect(a.p).toBeCloseTo(0.4, 12);
    expect(a.pMethod).toBe('exact');
    expect(a).toMatchObject({ runs: 3, found: 2, medianMs: 20, censoredAtMs: [BUDGET_MS] });
    expect(t.arms['random']).toMatchObject({ runs: 3, found: 1, medianMs: null });
    expect(t.arms['random'].a12Sooner).toBeUndefined();
    expect(t.arms['random'].p).toBeUndefined();
    expect(t).toMatchObject({ bug: 'ack-before-commit', baseline: 'random' });
    expect(t.test).toContain('two-sided Mann–Whitney U');
    expect(t.test).toContain('+∞');
  });

  it('uses the normal approximation with tie correction beyond 40 campaigns', () => {
    // 21 a side. Policy: finds at 1..11, 10 misses; random: one find at 100, 20 misses.
    // Pooled ranks: 1..11 the policy's finds, 12 random's, 13..42 the 30 tied misses (mid-rank 27.5).
    // Policy's rank sum 66 + 10·27.5 = 341, U = 341 − 21·22/2 = 110 (in times; 331 pairs sooner).
    // σ² = (21·21/12)·(43 − (30³ − 30)/(42·41)) = 1004.67; z = (|110 − 220.5| − 0.5)/σ = 3.4704.
    // p = 2·P(Z > 3.4704) = 0.000520 (scipy.stats.mannwhitneyu, asymptotic: 0.0005196641).
    const policy = outcomes([...Array.from({ length: 11 }, (_, i) => i + 1), ...Array<null>(10).fill(null)]);
    const random = outcomes([100, ...Array<null>(20).fill(null)]);

    const a = timeToBug('lazy-vote', { mallory: policy, random }, 'random').arms['mallory'];

    expect(a.pMethod).toBe('normal');
    expect(a.a12Sooner).toBeCloseTo(331 / 441, 12);
    expect(a.p).toBeCloseTo(0.0005196641, 6);
    expect(a.medianMs).toBe(11);
  });

  it('censors a campaign that ended early at its end, not at the budget', () => {
    const t = timeToBug(
      'stale-read',
      {
        random: [
          { index: 0, seed: 0, firstFindMs: 10, endMs: 10 },
          { index: 1, seed: 1, firstFindMs: null, endMs: 20 },
          { index: 2, seed: 2, firstFindMs: 30, endMs: 30 },
          { index: 3, seed: 3, firstFindMs: null, endMs: 40 },
        ],
      },
      'random',
    );
    const r = t.arms['random'];
    expect(r.censoredAtMs).toEqual([20, 40]);
    expect(r.steps.map((s) => s.found)).toEqual([0.25, 1 - 3 / 8]);
    expect(r.medianMs).toBe(30);
  });
});
