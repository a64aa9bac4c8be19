import { describe, expect, it } from 'vitest';

import { formatTime, timeTicks } from '../../src/core/time-axis.js';

describe('formatTime', () => {
  it('reads as a person says a duration, with the precision of the step', () => {
    expect(formatTime(3357.4, 100)).toBe('3.4 s');
    expect(formatTime(3000, 1000)).toBe('3 s');
    expect(formatTime(3250, 250)).toBe('3.25 s');
    expect(formatTime(850, 50)).toBe('850 ms');
    expect(formatTime(0.25, 0.05)).toBe('0.25 ms');
    expect(formatTime(80_000, 10_000)).toBe('1 min 20 s');
    expect(formatTime(120_000, 60_000)).toBe('2 min');
    expect(formatTime(3_900_000, 300_000)).toBe('1 h 5 min');
    expect(formatTime(0, 1000)).toBe('0 s');
    // An axis that reaches past a second reads in seconds from its start.
    expect(formatTime(200, 200, 1000)).toBe('0.2 s');
  });
});

describe('timeTicks', () => {
  it('puts ticks at round steps within the range, never more intervals than asked', () => {
    const ticks = timeTicks(0, 60_000, 6);
    expect(ticks.map((t) => t.label)).toEqual(['0 s', '10 s', '20 s', '30 s', '40 s', '50 s', '1 min']);
    const long = timeTicks(0, 4 * 60_000 + 7000, 8);
    expect(long[1].stepMs).toBe(60_000);
    expect(long.map((t) => t.label)).toEqual(['0 s', '1 min', '2 min', '3 min', '4 min']);
  });

  it('starts at the first round step inside a zoomed range, and reads ms when zoomed in far', () => {
    const ticks = timeTicks(3310, 3420, 6);
    expect(ticks.every((t) => t.ms >= 3310 && t.ms <= 3420)).toBe(true);
    expect(ticks.map((t) => t.label)).toEqual(['3.32 s', '3.34 s', '3.36 s', '3.38 s', '3.40 s', '3.42 s']);
    expect(timeTicks(100, 104, 4).map((t) => t.label)).toEqual([
      '100 ms',
      '101 ms',
      '102 ms',
      '103 ms',
      '104 ms',
    ]);
  });

  it('keeps to at most maxTicks intervals for any span', () => {
    for (const span of [1, 7, 95, 1234, 59_999, 61_000, 599_000, 3_700_000, 40_000_000]) {
      const ticks = timeTicks(0, span, 8);
      expect(ticks.length - 1).toBeLessThanOrEqual(8);
      expect(ticks.length).toBeGreaterThanOrEqual(2);
    }
  });
});
