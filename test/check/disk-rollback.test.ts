import { describe, expect, it } from 'vitest';

import { MAX_ROLLBACK_VALUES, diskLossTimesNs, withRollbacks } from '../../src/check/disk-rollback.js';
import type { Op } from '../../src/core/op.js';

const nemesis = (time: number, f: string, error?: string): Op => ({
  index: 0,
  time,
  type: 'info',
  process: 'nemesis',
  f,
  value: null,
  ...(error !== undefined ? { error } : {}),
});

describe('diskLossTimesNs', () => {
  it('takes the end of each disk-loss fault, skips skipped ones, and the start of one never ended', () => {
    const ops = [
      nemesis(1, 'lose-unfsynced'),
      nemesis(2, 'lose-unfsynced'),
      nemesis(3, 'torn-write', 'skipped: nothing to act on'),
      nemesis(4, 'kill'),
      nemesis(5, 'kill'),
      nemesis(6, 'torn-write'),
    ];
    expect(diskLossTimesNs(ops, [])).toEqual([2, 6]);
  });

  it('counts kills only when one fell on a node whose disk refused writes', () => {
    const ops = [nemesis(1, 'kill'), nemesis(2, 'kill')];
    expect(diskLossTimesNs(ops, [{ atMs: 0, f: 'kill', nodes: ['n1'] }])).toEqual([]);
    const refused = [
      { atMs: 0, f: 'disk-full', nodes: ['n1'] },
      { atMs: 1, f: 'kill', nodes: ['n1'] },
    ];
    expect(diskLossTimesNs(ops, refused)).toEqual([2]);
  });
});

describe('withRollbacks', () => {
  const write = (time: number, v: number, process = 0): Op => ({
    index: time,
    time,
    type: 'invoke',
    process,
    f: 'write',
    value: ['k', v],
  });

  it('adds, at each loss, never-completed writes of the initial value and the latest values before it', () => {
    const ops = [write(1, 1), write(2, 2), write(10, 3)];
    const out = withRollbacks(ops, 'k', [5]);
    const rollbacks = out.filter((op) => (op.process as number) >= 1e9);
    expect(rollbacks.map((op) => op.value)).toEqual([
      ['k', null],
      ['k', 2],
      ['k', 1],
    ]);
    expect(rollbacks.every((op) => op.type === 'invoke' && op.time === 5)).toBe(true);
    // In history order: after the ops before the loss, before those after it.
    expect(out.map((op) => op.time)).toEqual([1, 2, 5, 5, 5, 10]);
  });

  it('leaves out writes that failed: no copy held their values (a value behind many refused writes is kept)', () => {
    const ops: Op[] = [write(1, 772), { ...write(2, 772), type: 'ok' }];
    for (let i = 0; i < 20; i++) {
      const t = 10 + 2 * i;
      ops.push(write(t, 800 + i, 1), { ...write(t + 1, 800 + i, 1), type: 'fail' });
    }
    const values = withRollbacks(ops, 'k', [100])
      .filter((op) => (op.process as number) >= 1e9)
      .map((op) => (op.value as unknown[])[1]);
    expect(values).toEqual([null, 772]);
  });

  it('keeps at most MAX_ROLLBACK_VALUES written values per loss', () => {
    const ops = Array.from({ length: 20 }, (_, i) => write(i, i));
    const rollbacks = withRollbacks(ops, 'k', [100]).filter((op) => (op.process as number) >= 1e9);
    expect(rollbacks).toHaveLength(MAX_ROLLBACK_VALUES + 1);
  });
});
