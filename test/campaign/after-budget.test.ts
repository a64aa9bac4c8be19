import { describe, expect, it } from 'vitest';

import { afterBudget } from '../../src/campaign/_internals/run-schedules.js';

describe('afterBudget (what the terminal says of the time after --time)', () => {
  const start = 1_000_000;
  const budgetEnd = start + 60 * 60_000;

  it('says when the faults ended and how long the last reset and checks took', () => {
    expect(afterBudget(start, budgetEnd, budgetEnd - 2_000, budgetEnd + 29_000)).toBe(
      "the faults ended at 59:58, within --time 60:00; the last schedule's reset, final reads and checks took 31.0 s (29.0 s past the budget)",
    );
  });

  it('says a fault started within the budget that ended after it, and that none started after', () => {
    expect(afterBudget(start, budgetEnd, budgetEnd + 18_000, budgetEnd + 29_000)).toBe(
      "the last fault, started within --time 60:00, ended at 60:18 (none started after); the last schedule's reset, final reads and checks took 11.0 s (29.0 s past the budget)",
    );
  });

  it('says nothing of a run that ended within its budget', () => {
    expect(afterBudget(start, budgetEnd, budgetEnd - 9_000, budgetEnd - 1_000)).toBeUndefined();
  });
});
