import { describe, expect, it } from 'vitest';

import { foundBy, kaplanMeier, survivalMedianMs } from '../../src/report/survival.js';

const find = (atMs: number) => ({ atMs, found: true });
const ended = (atMs: number) => ({ atMs, found: false });

describe('kaplanMeier', () => {
  it('is the plain share found when every miss ran the whole budget', () => {
    const steps = kaplanMeier([find(30), find(10), ended(100), ended(100)]);
    expect(steps).toEqual([
      { atMs: 10, found: 0.25, atRisk: 4, finds: 1 },
      { atMs: 30, found: 0.5, atRisk: 3, finds: 1 },
    ]);
    // Exactly half found: the median is the find that brought the share to one half.
    expect(survivalMedianMs(steps)).toBe(30);
    expect(foundBy(steps, 9)).toBe(0);
    expect(foundBy(steps, 10)).toBe(0.25);
    expect(foundBy(steps, 99)).toBe(0.5);
  });

  it('gives the sample median when nothing ends early: between two finds where the curve is exactly one half', () => {
    expect(survivalMedianMs(kaplanMeier([find(40), find(10), find(30), find(20)]))).toBe(25);
    expect(survivalMedianMs(kaplanMeier([find(10), find(20), find(30)]))).toBe(20);
    // Half found, and the curve flat at one half to the end: the find that brought it there.
    expect(survivalMedianMs(kaplanMeier([find(10), find(20), ended(100), ended(100)]))).toBe(20);
  });

  it('takes a campaign censored early out of the risk set, raising the later steps', () => {
    // Finds at 10 and 30; campaigns ended without a find at 20 and 40.
    // t=10: 4 at risk, 1 find: S = 3/4. t=30: at risk 30 and 40 (2), 1 find: S = 3/4 · 1/2 = 3/8.
    const steps = kaplanMeier([find(10), ended(20), find(30), ended(40)]);
    expect(steps.map((s) => s.atRisk)).toEqual([4, 2]);
    expect(steps[0].found).toBeCloseTo(0.25, 12);
    expect(steps[1].found).toBeCloseTo(1 - 3 / 8, 12);
    // Naively 2 of 4 found by 30; the estimate says more, since one campaign left at 20.
    expect(survivalMedianMs(steps)).toBe(30);
  });

  it('keeps a campaign censored at a find time at risk at it, and counts tied finds together', () => {
    // t=5: 5 at risk, 2 finds: S = 3/5. t=8: at risk 8, 8, 9 (3; the one censored at 8 included), 1 find: S = 3/5 · 2/3 = 2/5.
    const steps = kaplanMeier([find(5), find(5), find(8), ended(8), ended(9)]);
    expect(steps).toHaveLength(2);
    expect(steps[0]).toMatchObject({ atMs: 5, atRisk: 5, finds: 2 });
    expect(steps[0].found).toBeCloseTo(0.4, 12);
    expect(steps[1]).toMatchObject({ atMs: 8, atRisk: 3, finds: 1 });
    expect(steps[1].found).toBeCloseTo(0.6, 12);
    expect(survivalMedianMs(steps)).toBe(8);
  });

  it('says "not reached" when fewer than half found it, and has no step without a find', () => {
    const steps = kaplanMeier([find(50), ended(100), ended(100)]);
    expect(steps).toHaveLength(1);
    expect(steps[0].found).toBeCloseTo(1 / 3, 12);
    expect(survivalMedianMs(steps)).toBeNull();
    expect(kaplanMeier([ended(100)])).toEqual([]);
    expect(survivalMedianMs([])).toBeNull();
    expect(() => kaplanMeier([find(-1)])).toThrow(/non-negative/);
  });
});
