import { describe, expect, it } from 'vitest';

import { afterBudget } from '../../src/campaign/_internals/run-schedules.js';
import { describeAfterBudget } from '../../src/core/run-timing.js';

describe('afterBudget (what followed --time, for the terminal and results.json)', () => {
  const startMs = 1_000_000;
  const budgetMs = 60 * 60_000;
  const budgetEnd = startMs + budgetMs;
  const lastPhases = { resetMs: 3_140, finalReadsMs: 1_210, checksMs: 420 };

  it('says when the budget was reached and how long the reset, final reads and checks took', () => {
    const after = afterBudget(
      { startMs, faultsEndedMs: budgetEnd + 12, schedulesToMs: budgetEnd + 4_782, lastPhases },
      budgetMs,
    );
    expect(after).toEqual({ faultsEndedMs: budgetMs + 12, ...lastPhases });
    expect(describeAfterBudget(budgetMs, after!)).toBe(
      'budget reached at 60:00; reset 3.1 s, final reads 1.2 s, checks 0.4 s',
    );
  });

  it('says when the faults ended, if before the budget', () => {
    const after = afterBudget(
      { startMs, faultsEndedMs: budgetEnd - 2_000, schedulesToMs: budgetEnd + 2_770, lastPhases },
      budgetMs,
    );
    expect(describeAfterBudget(budgetMs, after!)).toBe(
      'budget reached at 60:00 (the faults ended at 59:58); reset 3.1 s, final reads 1.2 s, checks 0.4 s',
    );
  });

  it('says nothing of a run that ended within its budget, or whose last schedule did not end', () => {
    expect(
      afterBudget(
        { startMs, faultsEndedMs: budgetEnd - 9_000, schedulesToMs: budgetEnd - 1_000, lastPhases },
        budgetMs,
      ),
    ).toBeUndefined();
    expect(
      afterBudget(
        { startMs, faultsEndedMs: budgetEnd, schedulesToMs: budgetEnd + 1_000, lastPhases: undefined },
        budgetMs,
      ),
    ).toBeUndefined();
  });
});
