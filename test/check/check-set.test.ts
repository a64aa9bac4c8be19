import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkSet } from '../../src/check/check-set.js';
import type { Op } from '../../src/core/op.js';

/** A history written line by line: `[process, type, f, value]`, indexed and timed in order. */
function history(...lines: [number, Op['type'], string, unknown][]): Op[] {
  return lines.map(([process, type, f, value], index) => ({ index, time: index, type, process, f, value }));
}

describe('checkSet', () => {
  it('passes a history whose reads hold every acknowledged element', () => {
    const ops = history(
      [0, 'invoke', 'add', ['a', 1]],
      [0, 'ok', 'add', ['a', 1]],
      [1, 'invoke', 'add', ['a', 2]],
      [2, 'invoke', 'read', ['a', null]],
      [2, 'ok', 'read', ['a', [1]]], // 2 is in flight: it may be missing
      [1, 'ok', 'add', ['a', 2]],
      [2, 'invoke', 'read', ['a', null]],
      [2, 'ok', 'read', ['a', [2, 1]]],
    );
    const result = checkSet(ops);
    expect(result).toMatchObject({
      valid: true,
      keys: 1,
      attempted: 2,
      acknowledged: 2,
      lost: [],
      unexpected: [],
    });
  });

  it('finds an acknowledged element missing from every read that began after its add', () => {
    const ops = history(
      [0, 'invoke', 'add', ['a', 1]],
      [0, 'ok', 'add', ['a', 1]],
      [0, 'invoke', 'add', ['a', 2]],
      [0, 'ok', 'add', ['a', 2]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', [2]]],
    );
    const result = checkSet(ops);
    expect(result.valid).toBe(false);
    expect(result.lost).toHaveLength(1);
    const [lost] = result.lost;
    expect(lost).toMatchObject({ type: 'lost', key: 'a', element: 1 });
    expect(lost.ops.map((op) => op.index)).toEqual([0, 1, 4, 5]);
    expect(lost.message).toBe(
      `key "a": element 1 lost: it was added by process 0's add (op 0, ok at op 1), but process 1's read (op 4, ok at op 5), which began after that, does not hold it (1 elements), nor does any read after`,
    );
  });

  it('finds an element a read saw and a later read lost, though its add never completed', () => {
    const ops = history(
      [0, 'invoke', 'add', ['a', 7]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', [7]]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', []]],
      [0, 'info', 'add', ['a', 7]],
    );
    const result = checkSet(ops);
    expect(result.lost.map((a) => a.element)).toEqual([7]);
    expect(result.recovered).toBe(1);
  });

  it('does not count a read that began before the add completed against it', () => {
    const ops = history(
      [0, 'invoke', 'add', ['a', 1]],
      [1, 'invoke', 'read', ['a', null]],
      [0, 'ok', 'add', ['a', 1]],
      [1, 'ok', 'read', ['a', []]],
    );
    expect(checkSet(ops)).toMatchObject({ valid: true, neverRead: 1 });
  });

  it('finds an element read that was never added, and one whose add failed', () => {
    const ops = history(
      [0, 'invoke', 'add', ['a', 1]],
      [0, 'fail', 'add', ['a', 1]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', [1, 99]]],
    );
    const result = checkSet(ops);
    expect(result.valid).toBe(false);
    expect(result.unexpected.map((a) => a.element).sort()).toEqual([1, 99]);
    expect(result.unexpected.find((a) => a.element === 99)?.message).toBe(
      `key "a": element 99 was never added, yet process 1's read (op 2, ok at op 3) returned it`,
    );
    expect(result.unexpected.find((a) => a.element === 1)?.message).toContain('which failed');
  });

  it('calls an element missing from one read but held by a later one stale, not lost', () => {
    const ops = history(
      [0, 'invoke', 'add', ['a', 1]],
      [0, 'ok', 'add', ['a', 1]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', []]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', [1]]],
    );
    const result = checkSet(ops);
    expect(result.lost).toEqual([]);
    expect(result.stale.map((a) => a.element)).toEqual([1]);
    expect(result.valid).toBe(false);
  });

  it('keeps keys apart and reads bare values as one set (Jepsen’s shape)', () => {
    const keyed = history(
      [0, 'invoke', 'add', ['a', 1]],
      [0, 'ok', 'add', ['a', 1]],
      [1, 'invoke', 'read', ['b', null]],
      [1, 'ok', 'read', ['b', []]],
    );
    expect(checkSet(keyed)).toMatchObject({ valid: true, keys: 2 });
    const bare = history(
      [0, 'invoke', 'add', 1],
      [0, 'ok', 'add', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', []],
    );
    expect(checkSet(bare)).toMatchObject({ valid: false, keys: 1 });
    expect(checkSet(bare).lost[0].message).toMatch(/^element 1 lost/);
  });

  it('throws on a history it cannot read', () => {
    expect(() => checkSet(history([0, 'invoke', 'write', ['a', 1]]))).toThrow(/add and read ops, not write/);
    expect(() => checkSet(history([0, 'invoke', 'read', ['a', null]], [0, 'ok', 'read', ['a', 3]]))).toThrow(
      /list of elements/,
    );
    expect(() => checkSet(history([0, 'invoke', 'add', ['a', 1]], [1, 'invoke', 'add', ['a', 1]]))).toThrow(
      /added twice/,
    );
  });

  it('passes any history of a single correct set, whatever the interleaving', () => {
    // Sequential ops on one correct set, each worker's invoke and completion adjacent: always valid.
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 60 }), (reads) => {
        const held: number[] = [];
        const lines: [number, Op['type'], string, unknown][] = [];
        reads.forEach((read, i) => {
          if (read)
            lines.push([i % 3, 'invoke', 'read', ['k', null]], [i % 3, 'ok', 'read', ['k', [...held]]]);
          else {
            lines.push([i % 3, 'invoke', 'add', ['k', i]]);
            held.push(i);
            lines.push([i % 3, 'ok', 'add', ['k', i]]);
          }
        });
        return checkSet(history(...lines)).valid;
      }),
    );
  });
});
