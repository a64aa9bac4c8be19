import { describe, expect, it } from 'vitest';

import {
  type ExplainedKey,
  type FailoverLoss,
  type LeaderChange,
  judgeFailoverLoss,
  oldLeaderOpsIn,
  splitBrains,
  withLeaderAtStart,
} from '../../src/check/failover-loss.js';
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

describe('judgeFailoverLoss across a split brain', () => {
  // As Redis declares it: a promotion (`MASTER MODE enabled`), a start as primary, a finished sync.
  const declared: FailoverLoss = {
    events: ['promoted', 'sentinel+switch-master'],
    why: 'asynchronous replication',
    splitBrain: { promoted: 'promoted', started: 'ready', converged: ['sync-finished'] },
  };
  const at = (ms: number, node: string, type: string, role?: string): LeaderChange => ({
    timeNs: ms * 1e6,
    node,
    type,
    ...(role !== undefined ? { role } : {}),
  });
  /**
   * Modelled on a control run: n1, promoted earlier, still takes a write of 7 (20–21 ms) and reads
   * it back (22–23 ms) after n3 was promoted; n3 then reads nil (24–25 ms). The explanation cites
   * the two reads: a value "resurrected" — no leader change falls between them.
   */
  function splitOps(nodes: { write: string; newer: string; older: string }): Op[] {
    const rows: [Op['type'], number, string, unknown, number, string][] = [
      ['invoke', 0, 'write', ['k', 7], 20, nodes.write],
      ['ok', 0, 'write', ['k', 7], 21, nodes.write],
      ['invoke', 0, 'read', ['k', null], 22, nodes.newer],
      ['ok', 0, 'read', ['k', 7], 23, nodes.newer],
      ['invoke', 1, 'read', ['k', null], 24, nodes.older],
      ['ok', 1, 'read', ['k', null], 25, nodes.older],
    ];
    return rows.map(([type, process, f, value, ms, node], index) => ({
      index,
      time: ms * 1e6,
      type,
      process,
      f,
      value,
      node,
    }));
  }
  const resurrected: ExplainedKey = { key: 'k', anomaly: 'resurrected', ops: [5, 3] };
  const onOld = splitOps({ write: 'n1', newer: 'n1', older: 'n3' });
  const twoMasters = [at(0, 'n1', 'ready', 'leader'), at(5, 'n1', 'promoted'), at(10, 'n3', 'promoted')];

  it('allows a loss whose old leader served a cited op while a promoted node also led', () => {
    expect(judgeFailoverLoss([resurrected], onOld, twoMasters)).toBeUndefined(); // the span rule alone
    expect(judgeFailoverLoss([resurrected], onOld, twoMasters, declared)).toEqual({
      keys: [
        {
          key: 'k',
          anomaly: 'resurrected',
          fromNs: 22e6,
          toNs: 25e6,
          changes: [],
          splitBrain: { old: 'n1', promoted: 'n3', fromNs: 10e6, toNs: Infinity },
        },
      ],
    });
  });

  it('allows a loss on a former primary that restarted as primary after a replica was promoted, until it syncs', () => {
    const restarted = [
      at(0, 'n1', 'ready', 'leader'),
      at(0, 'n2', 'ready', 'follower'),
      at(1, 'n2', 'sync-finished'),
      at(10, 'n2', 'promoted'),
      at(12, 'n1', 'ready', 'leader'),
    ];
    const ops = splitOps({ write: 'n1', newer: 'n1', older: 'n2' });
    expect(
      judgeFailoverLoss([resurrected], ops, [...restarted, at(30, 'n1', 'sync-finished')], declared),
    ).toBeDefined();
    // The old primary had taken the new one's data before the ops: no split brain then.
    expect(
      judgeFailoverLoss([resurrected], ops, [...restarted, at(15, 'n1', 'sync-finished')], declared),
    ).toBeUndefined();
  });

  it('allows nothing across a plain restart of the primary: starting as primary is no change of leader', () => {
    const restart = [
      at(0, 'n1', 'ready', 'leader'),
      at(0, 'n3', 'ready', 'follower'),
      at(15, 'n1', 'ready', 'leader'),
    ];
    expect(judgeFailoverLoss([resurrected], onOld, restart, declared)).toBeUndefined();
  });

  it('allows nothing when only the promoted node served the cited ops', () => {
    const onNew = splitOps({ write: 'n3', newer: 'n3', older: 'n3' });
    expect(judgeFailoverLoss([resurrected], onNew, twoMasters, declared)).toBeUndefined();
  });

  it("judges by the node that answered (a completion's `served`), not the client's own node", () => {
    // The same ops, each client homed on n2, Sentinel sending it to n1 or to n3.
    const homed = (served: string): Op[] =>
      onOld.map((op) => ({ ...op, node: 'n2', ...(op.type === 'ok' ? { served } : {}) }));
    expect(judgeFailoverLoss([resurrected], homed('n1'), twoMasters, declared)).toBeDefined();
    expect(judgeFailoverLoss([resurrected], homed('n3'), twoMasters, declared)).toBeUndefined();
    const brain = { old: 'n1', promoted: 'n3', fromNs: 10e6, toNs: Infinity };
    expect([...oldLeaderOpsIn(homed('n1'), brain)].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect([...oldLeaderOpsIn(homed('n3'), brain)]).toEqual([]);
  });

  it('allows nothing when the system declares no split brain, or an op has no node', () => {
    const plain: FailoverLoss = { events: declared.events, why: declared.why };
    expect(judgeFailoverLoss([resurrected], onOld, twoMasters, plain)).toBeUndefined();
    const noNode = onOld.map(
      (op) => Object.fromEntries(Object.entries(op).filter(([k]) => k !== 'node')) as unknown as Op,
    );
    expect(judgeFailoverLoss([resurrected], noNode, twoMasters, declared)).toBeUndefined();
  });
});

describe('splitBrains', () => {
  it('pairs each promoted leader with the leaders it overlapped, until either converges', () => {
    const declared: FailoverLoss = {
      events: ['promoted'],
      why: 'x',
      splitBrain: { promoted: 'promoted', started: 'ready', converged: ['sync-finished'] },
    };
    const ch = (ms: number, node: string, type: string, role?: string): LeaderChange => ({
      timeNs: ms,
      node,
      type,
      ...(role !== undefined ? { role } : {}),
    });
    expect(
      splitBrains(
        [
          ch(0, 'n1', 'ready', 'leader'),
          ch(0, 'n2', 'ready', 'follower'),
          ch(10, 'n2', 'promoted'),
          ch(20, 'n1', 'sync-finished'),
        ],
        declared,
      ),
    ).toEqual([{ old: 'n1', promoted: 'n2', fromNs: 10, toNs: 20 }]);
    // Two nodes started as leaders, neither promoted: no leader change, no split brain...
    expect(splitBrains([ch(0, 'n1', 'ready', 'leader'), ch(1, 'n2', 'ready', 'leader')], declared)).toEqual(
      [],
    );
    // ...until one converges while the other still leads: it gave up its data, it is the old one.
    expect(
      splitBrains(
        [ch(0, 'n1', 'ready', 'leader'), ch(1, 'n2', 'ready', 'leader'), ch(30, 'n2', 'sync-finished')],
        declared,
      ),
    ).toEqual([{ old: 'n2', promoted: 'n1', fromNs: 1, toNs: 30 }]);
    // One that converged before the other started leading shared no time with it.
    expect(
      splitBrains(
        [ch(0, 'n1', 'ready', 'leader'), ch(5, 'n1', 'sync-finished'), ch(10, 'n2', 'ready', 'leader')],
        declared,
      ),
    ).toEqual([]);
  });
});

describe('withLeaderAtStart', () => {
  const declared: FailoverLoss = {
    events: ['promoted'],
    why: 'x',
    splitBrain: { promoted: 'promoted', started: 'ready', converged: ['sync-finished'] },
  };
  // A redis control (seed 4, schedule 6): n2, promoted in an earlier schedule, is the primary; n1,
  // a replica killed under disk-full, restarts as a primary on its old data (n2 paused), takes
  // writes, and gives them up when Sentinel makes it a replica again.
  const changes: LeaderChange[] = [
    { timeNs: 192_786, node: 'n1', type: 'ready', role: 'leader' },
    { timeNs: 246_968, node: 'n1', type: 'sync-finished' },
  ];

  it('makes the leader the schedule began under one of a split brain with a stale primary beside it', () => {
    expect(splitBrains(changes, declared)).toEqual([]);
    expect(splitBrains(withLeaderAtStart(changes, 'n2', 180_583, declared), declared)).toEqual([
      { old: 'n1', promoted: 'n2', fromNs: 192_786, toNs: 246_968 },
    ]);
  });

  it('adds nothing when no node answered as leader, or the system declares no split brain', () => {
    expect(withLeaderAtStart(changes, undefined, 0, declared)).toEqual(changes);
    expect(withLeaderAtStart(changes, 'n2', 0, { events: ['promoted'], why: 'x' })).toEqual(changes);
  });
});
