import { describe, expect, it } from 'vitest';

import { REPLAY_STARTUP_ALLOWANCE_MS, replayBudgetMs } from '../../src/campaign/replay.js';

describe("a replay's time budget", () => {
  // A redis Sentinel bug (3 nodes, 12 steps of 2.5 s, last line at 27.7 s): its replays once got
  // 31 s in all, of which the cluster's start took ~10 s, and every replay skipped its last three
  // faults as "past the end of the run".
  const header = { steps: 12, stepMs: 2500 };
  const items = [{ atMs: 1 }, { atMs: 22_653 }, { atMs: 27_652 }];

  it('leaves the whole schedule after a slow cluster start', () => {
    const budget = replayBudgetMs(header, items);
    const slowStartMs = 60_000;
    // What the fixed-schedule runner gets: the budget left once the cluster is up.
    const left = budget - slowStartMs;
    expect(left).toBeGreaterThanOrEqual(27_652 + 2500);
    expect(budget).toBe(REPLAY_STARTUP_ALLOWANCE_MS + 30_152 + 1000);
  });

  it('counts a warm-up and a delayed (triggered) line', () => {
    expect(replayBudgetMs({ ...header, warmupMs: 5000 }, items)).toBe(replayBudgetMs(header, items) + 5000);
    const late = [{ atMs: 28_000, delayMs: 4000 }];
    expect(replayBudgetMs(header, late)).toBe(REPLAY_STARTUP_ALLOWANCE_MS + 32_000 + 2500 + 1000);
  });
});
