import { describe, expect, it } from 'vitest';

import {
  CONSISTENCY_MODELS,
  anomaliesForbiddenBy,
  isConsistencyModel,
  modelBoundary,
} from '../../../src/check/txn/consistency-model.js';

describe('consistency models', () => {
  it('forbid more the stronger they are', () => {
    const subset = (weaker: string, stronger: string): void => {
      const strong = anomaliesForbiddenBy(stronger as never);
      for (const type of anomaliesForbiddenBy(weaker as never)) expect(strong.has(type)).toBe(true);
    };
    subset('read-uncommitted', 'read-committed');
    subset('read-committed', 'repeatable-read');
    subset('read-committed', 'snapshot-isolation');
    subset('repeatable-read', 'serializable');
    subset('snapshot-isolation', 'serializable');
    subset('serializable', 'strict-serializable');
  });

  it('follow Adya: SI allows G2-item but not G-single; only strict serializability forbids realtime cycles', () => {
    expect(anomaliesForbiddenBy('snapshot-isolation').has('G2-item')).toBe(false);
    expect(anomaliesForbiddenBy('snapshot-isolation').has('G-single')).toBe(true);
    expect(anomaliesForbiddenBy('serializable').has('G-single-realtime')).toBe(false);
    expect(anomaliesForbiddenBy('strict-serializable').has('G0-realtime')).toBe(true);
    expect(anomaliesForbiddenBy('read-uncommitted').has('G1a')).toBe(false);
  });

  it('name the weakest models a set of anomalies rules out', () => {
    expect(modelBoundary([])).toEqual({ ruledOut: [], notRuledOut: CONSISTENCY_MODELS });
    expect(modelBoundary(['G0'])).toEqual({ ruledOut: ['read-uncommitted'], notRuledOut: [] });
    expect(modelBoundary(['G2-item']).ruledOut).toEqual(['repeatable-read']);
    expect(modelBoundary(['G-single']).ruledOut).toEqual(['snapshot-isolation', 'repeatable-read']);
    expect(modelBoundary(['internal']).ruledOut).toEqual(['snapshot-isolation']);
    expect(modelBoundary(['G1c-realtime'])).toEqual({
      ruledOut: ['strict-serializable'],
      notRuledOut: CONSISTENCY_MODELS.slice(1),
    });
  });

  it('recognise their names', () => {
    expect(isConsistencyModel('serializable')).toBe(true);
    expect(isConsistencyModel('linearizable')).toBe(false);
  });
});
