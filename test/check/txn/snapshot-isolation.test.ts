import { describe, expect, it } from 'vitest';

import { checkListAppend } from '../../../src/check/txn/check-list-append.js';
import { checkRwRegister } from '../../../src/check/txn/check-rw-register.js';
import type { ConsistencyModel } from '../../../src/check/txn/consistency-model.js';
import { bruteForceSnapshotIsolation } from './brute-force-snapshot-isolation.js';
import { history, serial } from './txn-history.js';

/** Each model's verdict, as Elle gives it for the history (valid: true). */
function verdicts(check: (model: ConsistencyModel) => boolean): Record<string, boolean> {
  const models: ConsistencyModel[] = [
    'serializable',
    'snapshot-isolation',
    'repeatable-read',
    'read-committed',
  ];
  return Object.fromEntries(models.map((m) => [m, check(m)]));
}

describe('snapshot isolation and what else Elle finds (Elle and elle-cli histories)', () => {
  it("finds the G-single of the Elle paper's example through an append no read shows (ww)", () => {
    // The shape of the example of Kingsbury & Alvaro's Elle paper (elle-cli:
    // histories/elle/paper-example.edn, expected test/test-data/paper-example-result.json:
    // G-single-item, not snapshot-isolation), with other keys and values. T5 read b = [1 2 4]:
    // T7's append of 3 to b comes after the 4 that T5 appended (ww), while T7 read a without the 8
    // T3 appended (rw) and T5 read that 8 (wr): one rw edge, forbidden by snapshot isolation.
    const ops = serial(
      [
        1,
        'ok',
        [
          ['append', 'c', 1],
          ['append', 'a', 2],
          ['append', 'a', 5],
          ['append', 'b', 1],
          ['append', 'b', 2],
        ],
      ],
      [
        1,
        'ok',
        [
          ['append', 'a', 8],
          ['r', 'c', [1]],
        ],
      ],
      [
        1,
        'ok',
        [
          ['append', 'b', 4],
          ['r', 'a', [2, 5, 8]],
          ['r', 'b', [1, 2, 4]],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'a', [2, 5]],
          ['append', 'b', 3],
        ],
      ],
    );
    const si = checkListAppend(ops, { model: 'snapshot-isolation' });
    expect(si.valid).toBe(false);
    expect(si.anomalyTypes).toContain('G-single');
    const cycle = si.anomalies['G-single']![0].cycle;
    expect(cycle.map((step) => step.edge.type).sort()).toEqual(['rw', 'wr', 'ww']);
    expect(cycle.find((step) => step.edge.type === 'ww')?.edge).toEqual({
      type: 'ww',
      key: 'b',
      value: 4,
      next: 3,
    });
    expect(verdicts((model) => checkListAppend(ops, { model }).valid)).toEqual({
      serializable: false,
      'snapshot-isolation': false,
      'repeatable-read': false,
      'read-committed': true,
    });
  });

  it('finds a lost update: two transactions read one version of a key and both appended to it', () => {
    // elle-cli: test/test-data/list-append-anomaly-lost-update.json (expected: G2-item and
    // lost-update; not snapshot-isolation, not repeatable-read, read-committed not ruled out).
    const ops = history(
      [0, 'invoke', [['append', 'k', 10]]],
      [0, 'ok', [['append', 'k', 10]]],
      [
        1,
        'invoke',
        [
          ['r', 'k', null],
          ['append', 'k', 11],
        ],
      ],
      [
        2,
        'invoke',
        [
          ['r', 'k', null],
          ['append', 'k', 12],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'k', [10]],
          ['append', 'k', 11],
        ],
      ],
      [
        2,
        'ok',
        [
          ['r', 'k', [10]],
          ['append', 'k', 12],
        ],
      ],
    );
    const si = checkListAppend(ops, { model: 'snapshot-isolation' });
    // Elle names G2-item and lost-update; the order snapshot isolation forces between the two
    // appends to k (each missed the other's, so first committer wins) is a G-single as well.
    expect(si.anomalyTypes).toEqual(['G-single', 'G2-item', 'lost-update']);
    expect(si.anomalies['G-single']![0].cycle.map((step) => step.edge)).toContainEqual(
      expect.objectContaining({ type: 'ww', key: 'k', firstCommitterWins: true }),
    );
    expect(checkListAppend(ops, { model: 'read-committed' }).anomalyTypes).toEqual([
      'G2-item',
      'lost-update',
    ]);
    expect(si.anomalies['lost-update']![0]).toMatchObject({ key: 'k', read: [10] });
    expect(si.anomalies['lost-update']![0].ops.map((op) => op.index)).toEqual([4, 5]);
    expect(verdicts((model) => checkListAppend(ops, { model }).valid)).toEqual({
      serializable: false,
      'snapshot-isolation': false,
      'repeatable-read': false,
      'read-committed': true,
    });
  });

  it('finds a lost update in a read-write register history', () => {
    // elle-cli: test/test-data/rw-register-anomaly-lost-update.json (expected: lost-update only).
    const ops = history(
      [0, 'invoke', [['w', 'k', 10]]],
      [0, 'ok', [['w', 'k', 10]]],
      [
        1,
        'invoke',
        [
          ['r', 'k', null],
          ['w', 'k', 11],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'k', 10],
          ['w', 'k', 11],
        ],
      ],
      [
        2,
        'invoke',
        [
          ['r', 'k', null],
          ['w', 'k', 12],
        ],
      ],
      [
        2,
        'ok',
        [
          ['r', 'k', 10],
          ['w', 'k', 12],
        ],
      ],
    );
    const si = checkRwRegister(ops, { model: 'snapshot-isolation' });
    expect(si.anomalyTypes).toContain('lost-update');
    expect(si.anomalies['lost-update']![0]).toMatchObject({ key: 'k', read: 10 });
    expect(verdicts((model) => checkRwRegister(ops, { model }).valid)).toEqual({
      serializable: false,
      'snapshot-isolation': false,
      'repeatable-read': false,
      'read-committed': true,
    });
  });

  it('finds a future read: a transaction read what it appended only afterwards', () => {
    // elle-cli: test/test-data/list-append-anomaly-future-read.json (expected: future-read; every
    // model from read committed up ruled out).
    const ops = serial([
      0,
      'ok',
      [
        ['r', 'q', [7]],
        ['append', 'q', 7],
      ],
    ]);
    const result = checkListAppend(ops, { model: 'read-committed' });
    expect(result.anomalyTypes).toEqual(['future-read']);
    expect(result.valid).toBe(false);
    expect(checkListAppend(ops, { model: 'read-uncommitted' }).valid).toBe(true);
  });

  it('lets write skew pass snapshot isolation (two rw edges, adjacent), not serializability', () => {
    const ops = history(
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
    );
    expect(checkListAppend(ops, { model: 'snapshot-isolation' }).valid).toBe(true);
    expect(checkListAppend(ops, { model: 'serializable' }).valid).toBe(false);
  });
  it('finds a long fork: two readers see two independent appends in opposite orders (G-nonadjacent)', () => {
    // The long fork of parallel snapshot isolation (Elle's G-nonadjacent: rw wr rw wr, the rw edges
    // never two in a row). T2 saw T1's append to x and not T3's to y; T4 saw T3's and not T1's: no
    // single order of commits gives both their snapshots.
    const ops = serial(
      [0, 'ok', [['append', 'x', 1]]],
      [
        1,
        'ok',
        [
          ['r', 'x', [1]],
          ['r', 'y', []],
        ],
      ],
      [2, 'ok', [['append', 'y', 1]]],
      [
        3,
        'ok',
        [
          ['r', 'y', [1]],
          ['r', 'x', []],
        ],
      ],
    );
    const si = checkListAppend(ops, { model: 'snapshot-isolation' });
    expect(si.valid).toBe(false);
    expect(si.anomalyTypes).toEqual(['G-nonadjacent']);
    const cycle = si.anomalies['G-nonadjacent']![0].cycle;
    expect(cycle.map((step) => step.edge.type)).toEqual(['rw', 'wr', 'rw', 'wr']);
    expect(si.anomalies['G-nonadjacent']![0].explanation).toMatch(/^G-nonadjacent: T\d+ read key/);
    expect(verdicts((model) => checkListAppend(ops, { model }).valid)).toEqual({
      serializable: false,
      'snapshot-isolation': false,
      'repeatable-read': false,
      'read-committed': true,
    });
  });

  it('lets a cycle pass snapshot isolation when two of its rw edges are in a row (rw rw wr wr)', () => {
    // T1 (process 1) read b without T2's append and T0 read a without T1's: two rw edges in a row
    // (T0 → T1 → T2); T2's append to c was read by T3 and T3's to d by T0 (wr, wr). Commits in
    // the order T2 T3 T0 T1, T1's snapshot taken before T2 committed, give every read: snapshot
    // isolation holds, serializability does not.
    const ops = history(
      [
        1,
        'invoke',
        [
          ['r', 'b', null],
          ['append', 'a', 1],
        ],
      ],
      [
        2,
        'invoke',
        [
          ['append', 'b', 1],
          ['append', 'c', 1],
        ],
      ],
      [
        2,
        'ok',
        [
          ['append', 'b', 1],
          ['append', 'c', 1],
        ],
      ],
      [
        3,
        'invoke',
        [
          ['r', 'c', null],
          ['append', 'd', 1],
        ],
      ],
      [
        3,
        'ok',
        [
          ['r', 'c', [1]],
          ['append', 'd', 1],
        ],
      ],
      [
        0,
        'invoke',
        [
          ['r', 'd', null],
          ['r', 'a', null],
        ],
      ],
      [
        0,
        'ok',
        [
          ['r', 'd', [1]],
          ['r', 'a', []],
        ],
      ],
      [
        1,
        'ok',
        [
          ['r', 'b', []],
          ['append', 'a', 1],
        ],
      ],
    );
    const si = checkListAppend(ops, { model: 'snapshot-isolation' });
    expect(si.valid).toBe(true);
    const serializable = checkListAppend(ops, { model: 'serializable' });
    expect(serializable.valid).toBe(false);
    expect(serializable.anomalyTypes).toEqual(['G2-item']);
    expect(bruteForceSnapshotIsolation(ops)).toBe(true);
  });
});
