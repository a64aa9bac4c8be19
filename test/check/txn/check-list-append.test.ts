import { describe, expect, it } from 'vitest';

import { HistoryError } from '../../../src/check/history/history-error.js';
import { checkListAppend } from '../../../src/check/txn/check-list-append.js';
import { history, invokeOf, type Row, serial } from './txn-history.js';

describe('checkListAppend', () => {
  it('accepts a serial history under every model', () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['r', 'x', [1]],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'x', [1]],
          ['append', 'x', 2],
          ['append', 'y', 1],
        ],
      ],
      [
        0,
        'ok',
        [
          ['r', 'x', [1, 2]],
          ['r', 'y', [1]],
        ],
      ],
    );
    const result = checkListAppend(ops, { model: 'strict-serializable' });
    expect(result).toMatchObject({ valid: true, anomalyTypes: [], ruledOut: [], txns: 3 });
    expect(result.notRuledOut).toContain('strict-serializable');
  });

  it('finds G0: two transactions whose appends land in opposite orders on two keys', () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['append', 'y', 1],
        ],
      ],
      [
        1,
        'ok',
        [
          ['append', 'x', 2],
          ['append', 'y', 2],
        ],
      ],
      [
        2,
        'ok',
        [
          ['r', 'x', [1, 2]],
          ['r', 'y', [2, 1]],
        ],
      ],
    );
    const result = checkListAppend(ops, { model: 'read-uncommitted' });
    expect(result.valid).toBe(false);
    expect(result.anomalyTypes).toEqual(['G0']);
    expect(result.ruledOut).toEqual(['read-uncommitted']);
    const [g0] = result.anomalies.G0 ?? [];
    expect(g0.cycle.map((step) => step.edge.type)).toEqual(['ww', 'ww']);
    expect(g0.explanation).toMatch(/^G0: T\d+ appended/);
  });

  it('finds G0 in a transaction whose appends show in the reverse of the order it made them', () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['append', 'x', 2],
        ],
      ],
      [1, 'ok', [['r', 'x', [2, 1]]]],
    );
    const result = checkListAppend(ops, { model: 'read-uncommitted' });
    expect(result.anomalyTypes).toEqual(['G0', 'G1b']);
    expect(result.anomalies.G0?.[0].explanation).toBe(
      'G0: T1 appended 1 then 2 to key "x", but the key\'s order has 2 first; so T1 would have to come before itself.',
    );
  });

  it('finds G1a: a committed read of an aborted append', () => {
    const ops = serial([0, 'fail', [['append', 'x', 1]]], [1, 'ok', [['r', 'x', [1]]]]);
    const result = checkListAppend(ops, { model: 'read-committed' });
    expect(result.valid).toBe(false);
    expect(result.anomalyTypes).toEqual(['G1a']);
    expect(result.anomalies.G1a?.[0]).toMatchObject({ key: 'x', value: 1, writer: ops[1], op: ops[3] });
    expect(checkListAppend(ops, { model: 'read-uncommitted' }).valid).toBe(true);
  });

  it('finds G1b: a read of a state a transaction passed through', () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['append', 'x', 2],
        ],
      ],
      [1, 'ok', [['r', 'x', [1]]]],
    );
    const result = checkListAppend(ops, { model: 'read-committed' });
    // Reading [1] also puts the reader before the append of 2 (rw) and after that of 1 (wr).
    expect(result.anomalyTypes).toEqual(['G-single', 'G1b']);
    expect(result.anomalies.G1b?.[0].explanation).toBe(
      'G1b: T3 read key "x" = [1], ending in 1, which T1 appended but followed with another append to that key',
    );
  });

  it('finds G1c: two transactions that each read the other', () => {
    const ops = history(
      [
        0,
        'invoke',
        [
          ['append', 'x', 1],
          ['r', 'y', null],
        ],
      ],
      [
        1,
        'invoke',
        [
          ['append', 'y', 1],
          ['r', 'x', null],
        ],
      ],
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['r', 'y', [1]],
        ],
      ],
      [
        1,
        'ok',
        [
          ['append', 'y', 1],
          ['r', 'x', [1]],
        ],
      ],
    );
    const result = checkListAppend(ops, { model: 'read-committed' });
    expect(result.anomalyTypes).toEqual(['G1c']);
    const [g1c] = result.anomalies.G1c ?? [];
    expect(g1c.cycle.map((step) => step.edge)).toEqual(
      expect.arrayContaining([
        { type: 'wr', key: 'x', value: 1 },
        { type: 'wr', key: 'y', value: 1 },
      ]),
    );
  });

  it('finds G-single (read skew), which snapshot isolation forbids', () => {
    const ops = history(
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
          ['append', 'x', 1],
          ['append', 'y', 1],
        ],
      ],
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['append', 'y', 1],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'x', []],
          ['r', 'y', [1]],
        ],
      ],
      [2, 'invoke', [['r', 'x', null]]],
      [2, 'ok', [['r', 'x', [1]]]],
    );
    const result = checkListAppend(ops, { model: 'snapshot-isolation' });
    expect(result.valid).toBe(false);
    expect(result.anomalyTypes).toEqual(['G-single']);
    expect(result.ruledOut).toEqual(['snapshot-isolation', 'repeatable-read']);
    expect(result.anomalies['G-single']?.[0].explanation).toBe(
      'G-single: T3 read key "x" without 1, which T2 appended (rw); T2 appended 1 to key "y", which T3 read (wr); so T3 would have to come before itself.',
    );
  });

  /** Two transactions each read what the other appends: neither sees the other's append. */
  const WRITE_SKEW: readonly Row[] = [
    [
      0,
      'invoke',
      [
        ['r', 'x', null],
        ['append', 'y', 1],
      ],
    ],
    [
      1,
      'invoke',
      [
        ['r', 'y', null],
        ['append', 'x', 1],
      ],
    ],
    [
      0,
      'ok',
      [
        ['r', 'x', []],
        ['append', 'y', 1],
      ],
    ],
    [
      1,
      'ok',
      [
        ['r', 'y', []],
        ['append', 'x', 1],
      ],
    ],
  ];

  it('finds G2-item (write skew): allowed by snapshot isolation, not by serializability', () => {
    const ops = history(
      ...WRITE_SKEW,
      [
        2,
        'invoke',
        [
          ['r', 'x', null],
          ['r', 'y', null],
        ],
      ],
      [
        2,
        'ok',
        [
          ['r', 'x', [1]],
          ['r', 'y', [1]],
        ],
      ],
    );
    expect(checkListAppend(ops, { model: 'snapshot-isolation' }).valid).toBe(true);
    const result = checkListAppend(ops, { model: 'serializable' });
    expect(result).toMatchObject({ valid: false, anomalyTypes: ['G2-item'], ruledOut: ['repeatable-read'] });
    expect(result.notRuledOut).toEqual(['snapshot-isolation', 'read-committed', 'read-uncommitted']);
  });

  it('finds a write skew nobody read afterwards: appends no read shows follow the reads of everything', () => {
    const ops = history(...WRITE_SKEW);
    expect(checkListAppend(ops, { model: 'serializable' }).anomalyTypes).toEqual(['G2-item']);
  });

  it('finds a lost update, named so and as G-single: both read the same list and appended', () => {
    const ops = history(
      [
        0,
        'invoke',
        [
          ['r', 'x', null],
          ['append', 'x', 1],
        ],
      ],
      [
        1,
        'invoke',
        [
          ['r', 'x', null],
          ['append', 'x', 2],
        ],
      ],
      [
        0,
        'ok',
        [
          ['r', 'x', []],
          ['append', 'x', 1],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'x', []],
          ['append', 'x', 2],
        ],
      ],
      [2, 'invoke', [['r', 'x', null]]],
      [2, 'ok', [['r', 'x', [1, 2]]]],
    );
    expect(checkListAppend(ops, { model: 'serializable' }).anomalyTypes).toEqual(['G-single', 'lost-update']);
  });

  it("finds internal inconsistency: a read that misses the transaction's own append", () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['r', 'x', []],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'y', [5]],
          ['r', 'y', [5, 6]],
        ],
      ],
      [
        2,
        'ok',
        [
          ['append', 'y', 5],
          ['append', 'y', 6],
        ],
      ],
    );
    const result = checkListAppend(ops, { model: 'serializable' });
    expect(result.anomalies.internal).toMatchObject([
      { key: 'x', read: [], expected: [1], complete: false },
      { key: 'y', read: [5, 6], expected: [5], complete: true },
    ]);
    expect(checkListAppend(ops, { model: 'read-committed' }).anomalyTypes).toContain('internal');
  });

  it('finds duplicate elements and incompatible orders', () => {
    const ops = serial(
      [
        0,
        'ok',
        [
          ['append', 'x', 1],
          ['append', 'y', 1],
        ],
      ],
      [
        0,
        'ok',
        [
          ['append', 'x', 2],
          ['append', 'y', 2],
        ],
      ],
      [1, 'ok', [['r', 'x', [1, 2, 1]]]],
      [1, 'ok', [['r', 'y', [1, 2]]]],
      [1, 'ok', [['r', 'y', [2, 1]]]],
    );
    const result = checkListAppend(ops, { model: 'read-uncommitted' });
    expect(result.anomalyTypes).toEqual(['duplicate-elements', 'incompatible-order']);
    expect(result.anomalies['incompatible-order']?.[0]).toMatchObject({
      key: 'y',
      reads: [
        [1, 2],
        [2, 1],
      ],
    });
    expect(result.anomalies['duplicate-elements']?.[0]).toMatchObject({ key: 'x', value: 1 });
  });

  it('finds a dirty update: a committed append right after an aborted one', () => {
    const ops = serial(
      [0, 'fail', [['append', 'x', 1]]],
      [1, 'ok', [['append', 'x', 2]]],
      [2, 'ok', [['r', 'x', [1, 2]]]],
    );
    const result = checkListAppend(ops, { model: 'read-committed' });
    expect(result.anomalyTypes).toEqual(['G1a', 'dirty-update']);
    expect(result.anomalies['dirty-update']?.[0]).toMatchObject({
      value: 1,
      next: 2,
      writer: ops[1],
      nextWriter: ops[3],
    });
  });

  it('finds a garbage read: an element nobody appended', () => {
    const ops = serial([0, 'ok', [['r', 'x', [7]]]]);
    expect(checkListAppend(ops, { model: 'read-uncommitted' }).anomalyTypes).toEqual(['garbage-read']);
  });

  it('finds G-single-realtime only with realtime edges: a stale read after a completed append', () => {
    const ops = serial(
      [0, 'ok', [['append', 'x', 1]]],
      [1, 'ok', [['r', 'x', []]]],
      [2, 'ok', [['r', 'x', [1]]]],
    );
    expect(checkListAppend(ops, { model: 'serializable' })).toMatchObject({ valid: true, anomalyTypes: [] });
    const strict = checkListAppend(ops, { model: 'strict-serializable' });
    expect(strict).toMatchObject({
      valid: false,
      anomalyTypes: ['G-single-realtime'],
      ruledOut: ['strict-serializable'],
    });
    expect(strict.anomalies['G-single-realtime']?.[0].explanation).toBe(
      'G-single-realtime: T3 read key "x" without 1, which T1 appended (rw); T1 completed before T3 was invoked (realtime); so T3 would have to come before itself.',
    );
    const sameProcess = serial(
      [0, 'ok', [['append', 'x', 1]]],
      [0, 'ok', [['r', 'x', []]]],
      [2, 'ok', [['r', 'x', [1]]]],
    );
    const process = checkListAppend(sameProcess, { model: 'serializable', process: true });
    expect(process).toMatchObject({ valid: true, anomalyTypes: ['G-single-process'] });
  });

  it("counts an indeterminate transaction's appends as possibly committed", () => {
    const ops = history(
      [
        0,
        'invoke',
        [
          ['append', 'x', 1],
          ['append', 'x', 2],
        ],
      ],
      [
        0,
        'info',
        [
          ['append', 'x', 1],
          ['append', 'x', 2],
        ],
      ],
      [1, 'invoke', [['r', 'x', null]]],
      [1, 'ok', [['r', 'x', [1, 2]]]],
      [2, 'invoke', [['append', 'x', 3]]],
    );
    expect(checkListAppend(ops, { model: 'strict-serializable' })).toMatchObject({ valid: true, txns: 3 });
  });

  it('keeps integers beyond 2^53 exact, and a double holding 2^53 is the bigint 2^53 (EDN equality)', () => {
    const big = 2n ** 53n;
    const ops = serial(
      [0, 'ok', [['append', big, big + 1n]]],
      [1, 'ok', [['r', big, [big]]]],
      [
        2,
        'ok',
        [
          ['append', 9007199254740992, 7],
          ['r', 9007199254740992, [big + 1n, 7]],
        ],
      ],
    );
    const result = checkListAppend(ops, { model: 'serializable' });
    expect(result.anomalyTypes).toEqual(['garbage-read', 'incompatible-order']);
    expect(result.anomalies['garbage-read']?.[0]).toMatchObject({ key: big, value: big });
    expect(result.anomalies['incompatible-order']?.[0]).toMatchObject({ key: big });
  });

  describe('rejects what is not a list-append history, naming the op', () => {
    const cases: [string, unknown, RegExp][] = [
      [
        'a read of a non-list',
        [['r', 'x', 3]],
        /op 1 .*micro-op 0 \["r","x",3\] reads a value that is not a list/,
      ],
      [
        'an unknown micro-op',
        [['w', 'x', 3]],
        /op 0 .*micro-op 0 \["w","x",3\] has f "w": use \["append", key, value\]/,
      ],
      ['a micro-op of two', [['r', 'x']], /micro-op 0 \["r","x"\] is not a list of 3/],
      [
        'a value that is not a list',
        'x',
        /op 1 .*value is "x": a transaction's value is a list of micro-ops/,
      ],
      ['a nil key', [['append', null, 1]], /micro-op 0 \["append",null,1\] has a nil key/],
      ['a nil element read', [['r', 'x', [null]]], /reads a list with a nil element/],
    ];
    for (const [what, value, message] of cases)
      it(what, () => {
        const invoked: unknown = Array.isArray(value) ? invokeOf(value as unknown[][]) : [];
        const ops = [
          { index: 0, process: 0, type: 'invoke' as const, f: 'txn', value: invoked },
          { index: 1, process: 0, type: 'ok' as const, f: 'txn', value },
        ];
        expect(() => checkListAppend(ops, { model: 'serializable' })).toThrow(message);
      });

    it('an op whose value is not micro-ops, whatever its f', () => {
      const ops = [{ index: 4, process: 0, type: 'invoke' as const, f: 'read', value: null }];
      expect(() => checkListAppend(ops, { model: 'serializable' })).toThrow(HistoryError);
      expect(() => checkListAppend(ops, { model: 'serializable' })).toThrow(
        /op 4 \(process 0, invoke read\): value is null: .* such as \[\["append", key, value\], \["r", key, null\]\]/,
      );
    });

    it('the same value appended twice to a key', () => {
      const ops = serial([0, 'ok', [['append', 'x', 1]]], [1, 'ok', [['append', 'x', 1]]]);
      expect(() => checkListAppend(ops, { model: 'serializable' })).toThrow(
        /op 3: appends 1 to key "x", which T1 appended already/,
      );
    });

    it('a completion that does not match its invoke', () => {
      const ops = history([0, 'invoke', [['append', 'x', 1]]], [0, 'ok', [['append', 'x', 2]]]);
      expect(() => checkListAppend(ops, { model: 'serializable' })).toThrow(
        /micro-op 0 .* where its invoke has/,
      );
    });

    it('an unknown model', () => {
      expect(() => checkListAppend([], { model: 'linearizable' as never })).toThrow(TypeError);
    });
  });
});
