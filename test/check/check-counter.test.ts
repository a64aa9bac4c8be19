import { describe, expect, it } from 'vitest';

import { checkCounter } from '../../src/check/check-counter.js';
import type { Op } from '../../src/core/op.js';

function history(...lines: [number, Op['type'], string, unknown][]): Op[] {
  return lines.map(([process, type, f, value], index) => ({ index, time: index, type, process, f, value }));
}

describe('checkCounter', () => {
  it('passes reads between the acknowledged and the attempted sums', () => {
    const ops = history(
      [0, 'invoke', 'add', ['c', 2]],
      [0, 'ok', 'add', ['c', 2]],
      [0, 'invoke', 'add', ['c', 3]], // never acknowledged: may count or not
      [1, 'invoke', 'read', ['c', null]],
      [1, 'ok', 'read', ['c', 5]],
      [1, 'invoke', 'read', ['c', null]],
      [1, 'ok', 'read', ['c', 2]],
      [0, 'info', 'add', ['c', 3]],
      [2, 'invoke', 'add', ['c', 4]],
      [2, 'fail', 'add', ['c', 4]],
      [1, 'invoke', 'read', ['c', null]],
      [1, 'ok', 'read', ['c', 5]],
    );
    expect(checkCounter(ops)).toMatchObject({ valid: true, keys: 1, adds: 2, reads: 3, violations: [] });
  });

  it('finds a read below what was acknowledged before it began', () => {
    const ops = history(
      [0, 'invoke', 'add', ['c', 2]],
      [0, 'ok', 'add', ['c', 2]],
      [0, 'invoke', 'add', ['c', 1]],
      [0, 'ok', 'add', ['c', 1]],
      [1, 'invoke', 'read', ['c', null]],
      [1, 'ok', 'read', ['c', 2]],
    );
    const result = checkCounter(ops);
    expect(result.valid).toBe(false);
    expect(result.violations).toHaveLength(1);
    expect(result.violations[0]).toMatchObject({ key: 'c', value: 2, lower: 3, upper: 3 });
    expect(result.violations[0].read.map((op) => op.index)).toEqual([4, 5]);
    expect(result.violations[0].message).toBe(
      `key "c": process 1's read (op 4, ok at op 5) returned 2, below 3, the sum of the adds acknowledged before it began (an acknowledged add lost or not yet visible)`,
    );
  });

  it('finds a read above every add invoked before it ended, and counts a failed add as never made', () => {
    const ops = history(
      [0, 'invoke', 'add', ['c', 2]],
      [0, 'fail', 'add', ['c', 2]],
      [1, 'invoke', 'read', ['c', null]],
      [1, 'ok', 'read', ['c', 2]],
      [0, 'invoke', 'add', ['c', 5]],
      [0, 'ok', 'add', ['c', 5]],
    );
    const result = checkCounter(ops);
    expect(result.violations.map((v) => [v.value, v.lower, v.upper])).toEqual([[2, 0, 0]]);
    expect(result.violations[0].message).toContain('above 0, the sum of every add invoked before it ended');
  });

  it('keeps keys apart, reads a null count as 0, and takes bare values as one counter', () => {
    const keyed = history(
      [0, 'invoke', 'add', ['a', 1]],
      [0, 'ok', 'add', ['a', 1]],
      [1, 'invoke', 'read', ['b', null]],
      [1, 'ok', 'read', ['b', null]],
    );
    expect(checkCounter(keyed)).toMatchObject({ valid: true, keys: 2 });
    const bare = history(
      [0, 'invoke', 'add', null],
      [0, 'ok', 'add', null],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 0],
    );
    expect(checkCounter(bare).violations.map((v) => v.message)).toEqual([
      "process 1's read (op 2, ok at op 3) returned 0, below 1, the sum of the adds acknowledged before it began (an acknowledged add lost or not yet visible)",
    ]);
  });

  it('throws on a history it cannot read', () => {
    expect(() => checkCounter(history([0, 'invoke', 'write', ['c', 1]]))).toThrow(/add and read ops/);
    expect(() =>
      checkCounter(history([0, 'invoke', 'read', ['c', null]], [0, 'ok', 'read', ['c', 'x']])),
    ).toThrow(/needs a number/);
  });
});
