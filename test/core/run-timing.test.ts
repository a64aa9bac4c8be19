import { describe, expect, it } from 'vitest';

import { describeRunTiming, runTiming } from '../../src/core/run-timing.js';

describe('runTiming', () => {
  it('splits the wall time into start-up, schedules and stopping, which add up to the whole', () => {
    const t = runTiming(60_000, 1_000, { fromMs: 13_000, toMs: 81_000 }, 85_000);
    expect(t).toEqual({
      budgetMs: 60_000,
      startupMs: 12_000,
      schedulesMs: 68_000,
      stoppingMs: 4_000,
      elapsedMs: 84_000,
    });
    expect(t.startupMs + t.schedulesMs + t.stoppingMs).toBe(t.elapsedMs);
  });

  it('a run that never reached its schedules spent it all in start-up', () => {
    expect(runTiming(60_000, 0, { fromMs: undefined, toMs: undefined }, 5_000)).toEqual({
      budgetMs: 60_000,
      startupMs: 5_000,
      schedulesMs: 0,
      stoppingMs: 0,
      elapsedMs: 5_000,
    });
  });
});

describe('describeRunTiming', () => {
  it('says the overrun against --time and where the time went', () => {
    expect(
      describeRunTiming({
        budgetMs: 60_000,
        startupMs: 12_000,
        schedulesMs: 68_000,
        stoppingMs: 4_000,
        elapsedMs: 84_000,
      }),
    ).toBe(
      'ran 84 s (--time 60 s, 24 s over): 12 s start-up, 68 s of schedules with their checks, 4.0 s stopping',
    );
  });

  it('says no overrun when there was none', () => {
    expect(
      describeRunTiming({
        budgetMs: 60_000,
        startupMs: 2_000,
        schedulesMs: 30_000,
        stoppingMs: 1_500,
        elapsedMs: 33_500,
      }),
    ).toBe('ran 34 s (--time 60 s): 2.0 s start-up, 30 s of schedules with their checks, 1.5 s stopping');
  });
});
