import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { ddmin } from '../../src/campaign/ddmin.js';

const containsAll =
  (required: readonly number[]) =>
  (subset: readonly number[]): Promise<boolean> =>
    Promise.resolve(required.every((r) => subset.includes(r)));

describe('ddmin', () => {
  it('keeps exactly the items a failure needs, in their order', async () => {
    const items = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    expect(await ddmin(items, containsAll([3, 9]))).toEqual([3, 9]);
    expect(await ddmin(items, containsAll([11]))).toEqual([11]);
    expect(await ddmin(items, containsAll(items))).toEqual(items);
  });

  it('returns a 1-minimal subset and asks no subset twice (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 4 }),
        async (items, need) => {
          // Fails when the subset holds at least `need` even numbers of the input (an "any k of"
          // failure: many minimal answers).
          const evens = items.filter((x) => x % 2 === 0);
          fc.pre(evens.length >= need);
          const test = (s: readonly number[]): boolean => s.filter((x) => x % 2 === 0).length >= need;
          const asked = new Set<string>();
          const result = await ddmin(items, (s) => {
            const key = s.join(',');
            expect(asked.has(key)).toBe(false);
            asked.add(key);
            return Promise.resolve(test(s));
          });
          expect(test(result)).toBe(true);
          for (let i = 0; i < result.length; i++) {
            expect(test(result.filter((_, j) => j !== i))).toBe(false);
          }
          // A subsequence of the input, in its order.
          expect(result).toEqual(items.filter((x) => result.includes(x)));
        },
      ),
    );
  });

  it('stops early when told to and returns the smallest subset found so far', async () => {
    let calls = 0;
    const result = await ddmin(
      [1, 2, 3, 4, 5, 6, 7, 8],
      (s) => {
        calls++;
        return Promise.resolve(s.includes(8));
      },
      () => calls >= 2,
    );
    expect(calls).toBe(2);
    expect(result).toEqual([5, 6, 7, 8]);
  });
});
