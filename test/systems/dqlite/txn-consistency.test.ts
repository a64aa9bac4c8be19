/**
 * dqlite's transactions are serializable, not linearizable, as its consistency model says
 * (https://dqlite.io/docs/explanation/consistency-model): dqlite-app's transactions are checked
 * as serializable. A read transaction that misses a commit acknowledged before it began is no
 * finding; a cycle without realtime edges (write skew) still is.
 */
import { describe, expect, it } from 'vitest';

import type { ScheduleCheckInput } from '../../../src/campaign/checker.js';
import { transactionalChecker } from '../../../src/campaign/checkers.js';
import type { Op } from '../../../src/core/op.js';
import { dqlite, dqliteApp } from '../../../src/systems/dqlite/dqlite.js';
import type { SystemAdapter } from '../../../src/systems/system.js';

type Row = readonly [type: Op['type'], process: number, node: string, value: unknown];

function ops(rows: readonly Row[]): Op[] {
  return rows.map(([type, process, node, value], i) => ({
    index: i,
    time: i * 1e6,
    type,
    process,
    node,
    f: 'txn',
    value,
  }));
}

function input(history: Op[], system: SystemAdapter): ScheduleCheckInput {
  return { schedule: 0, ops: history, faults: [], events: [], runDir: '/nowhere', system, nodeCount: 5 };
}

/** n5 leads and commits an append; n4, a leader cut off that has not stepped down, reads without it. */
const STALE_READ = ops([
  ['invoke', 0, 'n5', [['append', 'x', 1]]],
  ['ok', 0, 'n5', [['append', 'x', 1]]],
  ['invoke', 1, 'n4', [['r', 'x', null]]],
  ['ok', 1, 'n4', [['r', 'x', []]]],
]);

/** Each transaction reads the key the other appends to and misses the other's append: G2-item. */
const WRITE_SKEW = ops([
  [
    'invoke',
    0,
    'n1',
    [
      ['r', 'x', null],
      ['append', 'y', 1],
    ],
  ],
  [
    'invoke',
    1,
    'n2',
    [
      ['r', 'y', null],
      ['append', 'x', 1],
    ],
  ],
  [
    'ok',
    0,
    'n1',
    [
      ['r', 'x', []],
      ['append', 'y', 1],
    ],
  ],
  [
    'ok',
    1,
    'n2',
    [
      ['r', 'y', []],
      ['append', 'x', 1],
    ],
  ],
  [
    'invoke',
    2,
    'n3',
    [
      ['r', 'x', null],
      ['r', 'y', null],
    ],
  ],
  [
    'ok',
    2,
    'n3',
    [
      ['r', 'x', [1]],
      ['r', 'y', [1]],
    ],
  ],
]);

describe('dqlite-app transactions', () => {
  const adapter = dqliteApp.create({ bugs: [] });
  const checker = transactionalChecker('list-append');

  it('are declared serializable, as dqlite documents; the demo runs none', () => {
    expect(adapter.transactions?.consistency).toBe('serializable');
    expect(dqlite.create({ bugs: [] }).transactions).toBeUndefined();
  });

  it('a read transaction that misses an earlier commit is no finding; checked strict, the same history is', async () => {
    expect(await checker.check(input(STALE_READ, adapter))).toEqual([]);
    const strict = {
      name: 'strict',
      transactions: { workloads: ['list-append'] },
    } as unknown as SystemAdapter;
    const [finding] = await checker.check(input(STALE_READ, strict));
    expect(finding).toMatchObject({ kind: 'txn', name: 'not-strict-serializable' });
  });

  it('write skew is still found, as not serializable', async () => {
    const [finding, ...rest] = await checker.check(input(WRITE_SKEW, adapter));
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ kind: 'txn', name: 'not-serializable' });
    expect(finding.message).toMatch(/^not serializable \(list-append\): G2-item ×1/);
  });
});
