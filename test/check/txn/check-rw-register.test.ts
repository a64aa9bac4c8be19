import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkRwRegister } from '../../../src/check/txn/check-rw-register.js';
import { CONSISTENCY_MODELS } from '../../../src/check/txn/consistency-model.js';
import { generateListAppendHistory } from './generate-txn-history.js';
import { history, serial } from './txn-history.js';

describe('checkRwRegister', () => {
  it('accepts a serial history under every model', () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['r', 'x', null],
          ['w', 'x', 1],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'x', 1],
          ['w', 'x', 2],
          ['w', 'y', 1],
        ],
      ],
      [
        0,
        'ok',
        [
          ['r', 'x', 2],
          ['r', 'y', 1],
        ],
      ],
    );
    expect(checkRwRegister(ops, { model: 'strict-serializable' })).toMatchObject({
      valid: true,
      anomalyTypes: [],
    });
  });

  it('finds G0: each transaction overwrote the other, on different keys', () => {
    const ops = history(
      [
        0,
        'invoke',
        [
          ['w', 'x', 1],
          ['r', 'y', null],
          ['w', 'y', 3],
        ],
      ],
      [
        1,
        'invoke',
        [
          ['w', 'y', 2],
          ['r', 'x', null],
          ['w', 'x', 4],
        ],
      ],
      [
        0,
        'ok',
        [
          ['w', 'x', 1],
          ['r', 'y', 2],
          ['w', 'y', 3],
        ],
      ],
      [
        1,
        'ok',
        [
          ['w', 'y', 2],
          ['r', 'x', 1],
          ['w', 'x', 4],
        ],
      ],
    );
    const result = checkRwRegister(ops, { model: 'read-uncommitted' });
    expect(result.anomalyTypes).toEqual(['G0', 'G1c']);
    expect(result.anomalies.G0?.[0].explanation).toMatch(
      /^G0: T\d wrote \d to key "\w", which T\d overwrote with \d \(ww\); T\d wrote \d to key "\w", which T\d overwrote/,
    );
  });

  it('finds G1a, G1b, garbage reads and dirty updates', () => {
    const ops = serial(
      [0, 'fail', [['w', 'x', 1]]],
      [
        1,
        'ok',
        [
          ['r', 'x', 1],
          ['w', 'x', 2],
        ],
      ],
      [
        2,
        'ok',
        [
          ['w', 'y', 1],
          ['w', 'y', 2],
        ],
      ],
      [
        3,
        'ok',
        [
          ['r', 'y', 1],
          ['r', 'z', 9],
        ],
      ],
    );
    const result = checkRwRegister(ops, { model: 'read-committed' });
    expect(result.anomalyTypes).toEqual(['G1a', 'G1b', 'dirty-update', 'garbage-read']);
    expect(result.anomalies.G1a?.[0].explanation).toBe(
      'G1a: T3 read key "x" = 1, which T1 wrote and then aborted',
    );
    expect(result.anomalies.G1b?.[0]).toMatchObject({ key: 'y', value: 1, writer: ops[5] });
    expect(result.anomalies['dirty-update']?.[0]).toMatchObject({ value: 1, next: 2 });
    expect(result.ruledOut).toEqual(['read-uncommitted']);
  });

  it("finds internal inconsistency: a read that disagrees with the transaction's own write", () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['w', 'x', 1],
          ['r', 'x', null],
        ],
      ],
      [
        0,
        'ok',
        [
          ['r', 'y', null],
          ['r', 'y', 3],
        ],
      ],
    );
    const result = checkRwRegister(ops, { model: 'serializable' });
    expect(result.anomalies.internal).toMatchObject([
      { key: 'x', read: null, expected: 1 },
      { key: 'y', read: 3, expected: null },
    ]);
  });

  it('finds a lost update, named so and as G2-item: both read the initial state and wrote', () => {
    const ops = history(
      [
        0,
        'invoke',
        [
          ['r', 'x', null],
          ['w', 'x', 1],
        ],
      ],
      [
        1,
        'invoke',
        [
          ['r', 'x', null],
          ['w', 'x', 2],
        ],
      ],
      [
        0,
        'ok',
        [
          ['r', 'x', null],
          ['w', 'x', 1],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'x', null],
          ['w', 'x', 2],
        ],
      ],
    );
    const result = checkRwRegister(ops, { model: 'serializable' });
    // Both wrote x and neither saw the other: the order snapshot isolation would force between
    // them (first committer wins) closes a G-single too.
    expect(result.anomalyTypes).toEqual(['G-single', 'G2-item', 'lost-update']);
    expect(result.anomalies['G-single']?.[0].explanation).toMatch(/first committer wins: ww/);
    expect(checkRwRegister(ops, { model: 'read-committed' }).anomalyTypes).toEqual([
      'G2-item',
      'lost-update',
    ]);
    expect(result.anomalies['G2-item']?.[0].explanation).toMatch(
      /^G2-item: T\d read key "x" = nil, which T\d overwrote with \d \(rw\); T\d read key "x" = nil, which T\d overwrote with \d \(rw\)/,
    );
  });

  it('finds G-single (read skew) and a stale read after a completed write as G-single-realtime', () => {
    const skew = history(
      [
        1,
        'invoke',
        [
          ['r', 'x', null],
          ['r', 'y', null],
        ],
      ],
      [
        0,
        'invoke',
        [
          ['w', 'x', 1],
          ['w', 'y', 1],
        ],
      ],
      [
        0,
        'ok',
        [
          ['w', 'x', 1],
          ['w', 'y', 1],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'x', null],
          ['r', 'y', 1],
        ],
      ],
    );
    expect(checkRwRegister(skew, { model: 'snapshot-isolation' }).anomalyTypes).toEqual(['G-single']);
    const stale = serial([0, 'ok', [['w', 'x', 1]]], [1, 'ok', [['r', 'x', null]]]);
    expect(checkRwRegister(stale, { model: 'serializable' }).valid).toBe(true);
    expect(checkRwRegister(stale, { model: 'strict-serializable' }).anomalyTypes).toEqual([
      'G-single-realtime',
    ]);
  });

  it('takes transactions filed under any f, such as read and write', () => {
    const ops = serial([0, 'ok', [['w', 'x', 1]]], [1, 'ok', [['r', 'x', 1]]]).map((op) => ({
      ...op,
      f: (op.value as readonly (readonly unknown[])[]).some(([f]) => f === 'w') ? 'write' : 'read',
    }));
    expect(checkRwRegister(ops, { model: 'strict-serializable' })).toMatchObject({ valid: true, txns: 2 });
  });

  it('rejects a read of a list and a value written twice to a key', () => {
    const list = history([0, 'invoke', [['r', 'x', null]]], [0, 'ok', [['r', 'x', [1]]]]);
    expect(() => checkRwRegister(list, { model: 'serializable' })).toThrow(
      /op 1 .*reads a list, where a register holds one value/,
    );
    const twice = serial([0, 'ok', [['w', 'x', 1]]], [1, 'ok', [['w', 'x', 1]]]);
    expect(() => checkRwRegister(twice, { model: 'serializable' })).toThrow(
      /op 3: writes 1 to key "x", which T1 wrote already/,
    );
  });

  it('never flags a real serial execution, overlapping or not', () => {
    const executions = fc.record({
      seed: fc.integer({ min: 0, max: 0x7fffffff }),
      txns: fc.integer({ min: 1, max: 120 }),
      processes: fc.integer({ min: 1, max: 8 }),
      keys: fc.integer({ min: 1, max: 5 }),
      appendsPerKey: fc.integer({ min: 1, max: 12 }),
      maxMicroOps: fc.integer({ min: 1, max: 5 }),
      failRate: fc.constantFrom(0, 0.1),
      infoRate: fc.constantFrom(0, 0.1),
      sequential: fc.boolean(),
    });
    fc.assert(
      fc.property(executions, (options) => {
        const ops = generateListAppendHistory({ ...options, workload: 'rw-register' });
        for (const model of CONSISTENCY_MODELS)
          expect(checkRwRegister(ops, { model, process: true }).anomalyTypes).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
