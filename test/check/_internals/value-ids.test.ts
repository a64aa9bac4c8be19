import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { ValueIds } from '../../../src/check/_internals/value-ids.js';

/** JSON-like values, the plain ones `ValueIds` gives ids to. */
const plain = fc.jsonValue({ maxDepth: 3 });

describe('ValueIds', () => {
  it('gives equal plain values one id and different ones different ids, as their JSON text', () => {
    fc.assert(
      fc.property(fc.array(plain, { maxLength: 30 }), (values) => {
        const ids = new ValueIds();
        const byText = new Map<string, number>();
        for (const value of values) {
          const id = ids.id(structuredClone(value));
          expect(id).toBeGreaterThanOrEqual(0);
          const text = JSON.stringify(value);
          const seen = byText.get(text);
          if (seen === undefined) {
            expect([...byText.values()]).not.toContain(id);
            byText.set(text, id);
          } else {
            expect(id).toBe(seen);
          }
        }
      }),
    );
  });

  it('tells apart values whose tokens could be confused', () => {
    const ids = new ValueIds();
    const values: unknown[] = [
      1,
      '1',
      1n,
      true,
      'true',
      null,
      'null',
      [],
      {},
      [1],
      [[1]],
      [1, 2],
      [[1, 2]],
      [[1], 2],
      [1, [2]],
      { a: 1 },
      { a: [1] },
      ['a', 1],
      { a: 1, b: 2 },
      { b: 2, a: 1 },
      { f: 'write', value: 3 },
      { f: 'write', value: '3' },
      { f: 'cas', from: 3, to: 4 },
    ];
    const seen = values.map((value) => ids.id(value));
    expect(new Set(seen).size).toBe(values.length);
    expect(values.map((value) => ids.id(structuredClone(value)))).toEqual(seen);
  });

  it('gives no id to what is not plain, so it never equals anything', () => {
    const ids = new ValueIds();
    for (const value of [undefined, NaN, Infinity, new Map(), new Date(0), [1, undefined], { a: () => 1 }])
      expect(ids.id(value)).toBe(-1);
    expect(ids.pairId(new Map(), 1)).toBe(-1);
    expect(ids.pairId(1, new Set())).toBe(-1);
  });

  it('pairs: a missing second value differs from every value, and from nil', () => {
    const ids = new ValueIds();
    const read = { f: 'read' };
    const pairs = [
      ids.pairId(read, undefined),
      ids.pairId(read, null),
      ids.pairId(read, 1),
      ids.pairId(read, [1]),
      ids.id([read, 1]),
      ids.id(read),
    ];
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(ids.pairId({ f: 'read' }, undefined)).toBe(pairs[0]);
    expect(ids.pairId({ f: 'read' }, 1)).toBe(pairs[2]);
  });
});
