import { describe, expect, it } from 'vitest';

import { AdaptivePolicy, GLOBAL_STATE } from '../../../src/policy/adaptive.js';
import { CorpusPolicy } from '../../../src/policy/corpus.js';
import { MalloryPolicy } from '../../../src/policy/mallory.js';
import { mergeEntry, setEntry, type ValueEntry } from '../../../src/policy/_internals/put-entry.js';
import type { Policy, PolicyValue } from '../../../src/policy/policy.js';
import { TRIGGER_EVENT_STATE, TriggeredPolicy } from '../../../src/policy/triggered.js';

describe('put entries', () => {
  it('load replaces; merge takes the mean weighted by visits and adds the visits', () => {
    const table = new Map<string, ValueEntry>([['a', { value: 1, visits: 1 }]]);
    mergeEntry(table, 'a', 0, 3);
    expect(table.get('a')).toEqual({ value: 0.25, visits: 4 });
    mergeEntry(table, 'b', 2, 2);
    expect(table.get('b')).toEqual({ value: 2, visits: 2 });
    setEntry(table, 'a', 9, 1);
    expect(table.get('a')).toEqual({ value: 9, visits: 1 });
  });
});

function row(policy: Policy, state: string, action: string): PolicyValue | undefined {
  return policy.save().find((v) => v.state === state && v.action === action);
}

describe('Policy.merge', () => {
  const mine: PolicyValue = { state: 's', action: 'kill:one', value: 1, visits: 1 };
  const theirs: PolicyValue = { state: 's', action: 'kill:one', value: 0, visits: 3 };

  it.each([
    ['adaptive', () => new AdaptivePolicy()],
    ['mallory', () => new MalloryPolicy()],
    ['triggered', () => new TriggeredPolicy()],
    ['corpus', () => new CorpusPolicy()],
  ] as const)('%s merges a row by visits where load replaces it', (_name, make) => {
    const merged = make();
    merged.load([mine]);
    merged.merge?.([theirs]);
    expect(row(merged, 's', 'kill:one')).toEqual({ ...mine, value: 0.25, visits: 4 });

    const loaded = make();
    loaded.load([mine]);
    loaded.load([theirs]);
    expect(row(loaded, 's', 'kill:one')).toEqual(theirs);
  });

  it("merges the adaptive policy's global rows and the triggered policy's trigger rows too", () => {
    const adaptive = new AdaptivePolicy();
    adaptive.load([{ state: GLOBAL_STATE, action: 'pause:leader', value: 4, visits: 2 }]);
    adaptive.merge([{ state: GLOBAL_STATE, action: 'pause:leader', value: 1, visits: 2 }]);
    expect(row(adaptive, GLOBAL_STATE, 'pause:leader')).toMatchObject({ value: 2.5, visits: 4 });

    const triggered = new TriggeredPolicy();
    triggered.load([{ state: TRIGGER_EVENT_STATE, action: 'recv', value: 1, visits: 1 }]);
    triggered.merge([{ state: TRIGGER_EVENT_STATE, action: 'recv', value: 3, visits: 1 }]);
    expect(row(triggered, TRIGGER_EVENT_STATE, 'recv')).toMatchObject({ value: 2, visits: 2 });
  });
});
