import { describe, expect, it } from 'vitest';

import {
  type CheckerVerdict,
  describeRunVerdict,
  mergeValid,
  runVerdict,
  scheduleVerdicts,
} from '../../src/core/verdict.js';

function verdict(checker: string, valid: CheckerVerdict['valid']): CheckerVerdict {
  return { checker, valid, findings: valid === false ? [`${checker}/x`] : [], ops: 10, ms: 1 };
}

describe('verdicts', () => {
  it("merge as Jepsen's merge-valid: any invalid wins, then unknown, else valid (none checked: valid)", () => {
    expect(mergeValid([])).toBe(true);
    expect(mergeValid([true, true])).toBe(true);
    expect(mergeValid([true, 'unknown'])).toBe('unknown');
    expect(mergeValid(['unknown', false, true])).toBe(false);
    expect(mergeValid([false, 'unknown'])).toBe(false);
  });

  it("tally each check over the run's schedules and say the run's verdict in one line", () => {
    const schedules = [
      scheduleVerdicts(0, [verdict('crash', true), verdict('linearizable', true)]),
      scheduleVerdicts(1, [verdict('crash', false), verdict('linearizable', 'unknown')]),
      scheduleVerdicts(2, [verdict('crash', true), verdict('linearizable', true)]),
    ];
    expect(schedules.map((s) => s.valid)).toEqual([true, false, true]);
    const run = runVerdict(schedules);
    expect(run.valid).toBe(false);
    expect(run.checkers).toEqual([
      { checker: 'crash', schedules: 3, valid: 2, invalid: 1, unknown: 0 },
      { checker: 'linearizable', schedules: 3, valid: 2, invalid: 0, unknown: 1 },
    ]);
    expect(describeRunVerdict(run)).toBe(
      'invalid — crash 2/3 valid (1 invalid), linearizable 2/3 valid (1 unknown)',
    );
    expect(describeRunVerdict(runVerdict(schedules.slice(2)))).toBe(
      'valid — crash 1/1 valid, linearizable 1/1 valid',
    );
    expect(runVerdict([]).valid).toBe('unknown');
    expect(describeRunVerdict(runVerdict([]))).toBe('unknown — no schedule was checked');
  });
});
