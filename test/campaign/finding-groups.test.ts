import { describe, expect, it } from 'vitest';

import { FindingGroups, findingSignature, groupBySignature } from '../../src/campaign/finding-groups.js';

describe('findingSignature', () => {
  it('is kind, name and the shape of the evidence, unless the finding names its own', () => {
    const lost = (key: string, value: number) => ({
      kind: 'durability',
      name: 'lost',
      evidence: { key, value },
    });
    expect(findingSignature(lost('x', 1))).toBe(findingSignature(lost('y', 2)));
    expect(findingSignature(lost('x', 1))).toBe('durability/lost {key:string,value:number}');
    expect(findingSignature({ ...lost('x', 1), signature: 'crash/x a+b' })).toBe('crash/x a+b');
  });
});

describe('FindingGroups', () => {
  it('says whether a hit is the first of its signature, and keeps every hit of each', () => {
    const groups = new FindingGroups<{ schedule: number }>();
    expect(groups.add('a', { schedule: 0 }).isNew).toBe(true);
    expect(groups.add('b', { schedule: 1 }).isNew).toBe(true);
    const again = groups.add('a', { schedule: 2 });
    expect(again.isNew).toBe(false);
    expect(again.group).toEqual({
      signature: 'a',
      first: { schedule: 0 },
      hits: [{ schedule: 0 }, { schedule: 2 }],
    });
    expect(groups.groups().map((g) => [g.signature, g.hits.length])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });

  it('groupBySignature puts the earliest hit first, whatever order they come in (the fleet report)', () => {
    const hits = [
      { sig: 's', at: 30 },
      { sig: 't', at: 5 },
      { sig: 's', at: 10 },
    ];
    const groups = groupBySignature(
      hits,
      (h) => h.sig,
      (a, b) => a.at - b.at,
    );
    expect(groups.map((g) => [g.signature, g.first.at, g.hits.map((h) => h.at)])).toEqual([
      ['s', 10, [10, 30]],
      ['t', 5, [5]],
    ]);
  });
});
