import { describe, expect, it } from 'vitest';

import { type ExplainedKey, judgeFailoverLoss } from '../../src/check/failover-loss.js';
import type { Op } from '../../src/core/op.js';

/** Write of 2 on "x" at 2–3 ms, a read of 1 at 4–5 ms; "y" likewise 10 ms later. */
function ops(): Op[] {
  const rows: [Op['type'], number, string, unknown, number][] = [
    ['invoke', 0, 'write', ['x', 2], 2],
    ['ok', 0, 'write', ['x', 2], 3],
    ['invoke', 1, 'read', ['x', null], 4],
    ['ok', 1, 'read', ['x', 1], 5],
    ['invoke', 0, 'write', ['y', 2], 12],
    ['ok', 0, 'write', ['y', 2], 13],
    ['invoke', 1, 'read', ['y', null], 14],
    ['info', 1, 'read', ['y', null], 15],
  ];
  return rows.map(([type, process, f, value, ms], index) => ({
    index,
    time: ms * 1e6,
    type,
    process,
    f,
    value,
  }));
}

const lostX: ExplainedKey = { key: 'x', anomaly: 'lost-write', ops: [1, 3] };
const change = (ms: number): { timeNs: number; node: string; type: string } => ({
  timeNs: ms * 1e6,
  node: 'n2',
  type: 'promoted',
});

describe('judgeFailoverLoss', () => {
  it('allows a lost write whose ops span a leader change, naming the change and the span', () => {
    expect(judgeFailoverLoss([lostX], ops(), [change(1), change(3.5)])).toEqual({
      keys: [{ key: 'x', anomaly: 'lost-write', fromNs: 2e6, toNs: 5e6, changes: [change(3.5)] }],
    });
  });

  it('allows nothing without a leader change between the first invocation and the last completion', () => {
    expect(judgeFailoverLoss([lostX], ops(), [])).toBeUndefined();
    expect(judgeFailoverLoss([lostX], ops(), [change(1.9), change(5.1)])).toBeUndefined();
  });

  it('allows nothing when one key of several has no leader change in its span', () => {
    const staleY: ExplainedKey = { key: 'y', anomaly: 'stale-read', ops: [5] };
    expect(judgeFailoverLoss([lostX, staleY], ops(), [change(3.5)])).toBeUndefined();
    expect(judgeFailoverLoss([lostX, staleY], ops(), [change(3.5), change(12.5)])).toBeDefined();
  });

  it('allows no anomaly a lost write does not explain, and no span left open by an op never answered', () => {
    const never: ExplainedKey = { key: 'x', anomaly: 'never-written', ops: [3] };
    expect(judgeFailoverLoss([never], ops(), [change(3.5)])).toBeUndefined();
    const open: ExplainedKey = { key: 'y', anomaly: 'lost-write', ops: [5, 7] };
    expect(judgeFailoverLoss([open], ops(), [change(13.5)])).toBeUndefined();
    expect(judgeFailoverLoss([], ops(), [change(3.5)])).toBeUndefined();
  });
});
