import { describe, expect, it } from 'vitest';

import {
  bankChecker,
  linearizabilityChecker,
  setChecker,
  transactionalChecker,
} from '../../src/campaign/checkers.js';
import { judgeDurability } from '../../src/check/durability.js';
import type { ScheduleChecker, ScheduleCheckInput } from '../../src/campaign/checker.js';
import type { Op } from '../../src/core/op.js';
import type { SystemAdapter } from '../../src/systems/system.js';
import { REDIS_FAILOVER_LOSS } from '../../src/systems/redis/redis.js';

let index = 0;
function op(type: Op['type'], process: number, value: unknown): Op {
  return { index: index++, time: index, type, process, f: 'txn', value };
}

/** Write skew: each reads the key the other appends to, neither sees the other's append. */
function writeSkew(): Op[] {
  index = 0;
  return [
    op('invoke', 0, [
      ['r', 'x', null],
      ['append', 'y', 1],
    ]),
    op('invoke', 1, [
      ['r', 'y', null],
      ['append', 'x', 1],
    ]),
    op('ok', 0, [
      ['r', 'x', null],
      ['append', 'y', 1],
    ]),
    op('ok', 1, [
      ['r', 'y', null],
      ['append', 'x', 1],
    ]),
    op('invoke', 2, [
      ['r', 'x', null],
      ['r', 'y', null],
    ]),
    op('ok', 2, [
      ['r', 'x', [1]],
      ['r', 'y', [1]],
    ]),
  ];
}

function input(
  ops: Op[],
  system: Partial<SystemAdapter> = {},
  faults: ScheduleCheckInput['faults'] = [],
): ScheduleCheckInput {
  return {
    schedule: 0,
    ops,
    faults,
    events: [],
    runDir: '/nowhere',
    system: system as SystemAdapter,
    nodeCount: 3,
  };
}

/** x = 1 then x = 2 acknowledged, then every read says 1: the write of 2 was lost. */
function lostWrite(): Op[] {
  const rows: [Op['type'], number, string, unknown][] = [
    ['invoke', 0, 'write', ['x', 1]],
    ['ok', 0, 'write', ['x', 1]],
    ['invoke', 0, 'write', ['x', 2]],
    ['ok', 0, 'write', ['x', 2]],
    ['invoke', 1, 'read', ['x', null]],
    ['ok', 1, 'read', ['x', 1]],
  ];
  return rows.map(([type, process, f, value], i) => ({ index: i, time: i * 1e6, type, process, f, value }));
}

describe('linearizabilityChecker against a declared failover loss', () => {
  // lostWrite(): the write of 2 runs 2–3 ms, the read that misses it 4–5 ms.
  const redisLike = {
    name: 'redis',
    durability: 'process-crash' as const,
    failoverLoss: REDIS_FAILOVER_LOSS,
  };
  const promoted = (ms: number): { timeNs: number; node: string; type: string } => ({
    timeNs: ms * 1e6,
    node: 'n2',
    type: 'promoted',
  });

  it('a write lost across a leader change the system declares may lose it is a note that says so', async () => {
    const findings = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), redisLike),
      leaderChanges: [promoted(3.5)],
    });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ kind: 'durability', name: 'failover-loss', severity: 'note' });
    expect(findings[0].message).toMatch(
      /^allowed by the declared durability: redis declares that a change of leader may lose acknowledged writes \(replication is asynchronous.*\), and the leader changed while the ops of every violating key ran \(promoted on n2 at 0\.004 s\): key "x": lost acknowledged write/,
    );
  });

  it('the same loss with no leader change in its span stays a bug', async () => {
    const before = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), redisLike),
      leaderChanges: [promoted(1)],
    });
    const after = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), redisLike),
      leaderChanges: [promoted(6)],
    });
    const none = await linearizabilityChecker(10_000).check(input(lostWrite(), redisLike));
    for (const [finding] of [before, after, none]) {
      expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
      expect(finding.severity).toBeUndefined();
    }
  });

  it('a leader change excuses nothing on a system that declares no failover loss', async () => {
    const [finding] = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), { name: 's', durability: 'process-crash' }),
      leaderChanges: [promoted(3.5)],
    });
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });

  it('a read of a value never written is no failover loss, leader change or not', async () => {
    const ops = lostWrite().map((o) => (o.index === 5 ? { ...o, value: ['x', 9] } : o));
    const [finding] = await linearizabilityChecker(10_000).check({
      ...input(ops, redisLike),
      leaderChanges: [promoted(3.5)],
    });
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
    expect(finding.message).toContain('never-written');
  });
});

describe('linearizabilityChecker across a split brain of two primaries after a restart', () => {
  const redisLike = {
    name: 'redis',
    durability: 'process-crash' as const,
    failoverLoss: REDIS_FAILOVER_LOSS,
  };
  const at = (ms: number, node: string, type: string, role?: string) => ({
    timeNs: ms * 1e6,
    node,
    type,
    ...(role !== undefined ? { role } : {}),
  });
  // Modelled on a redis control (seed 4): every node restarted, n1 and n2 both came back as primary
  // (ready as leader at 0 and 0.5 ms) until Sentinel made n1 a replica of n2 (its sync done at 10 ms).
  const twoPrimaries = [
    at(0, 'n1', 'ready', 'leader'),
    at(0.5, 'n2', 'ready', 'leader'),
    at(10, 'n1', 'sync-finished'),
  ];
  /** n1 and n2 each take writes on their own copy; n1's cas on its own value 1 fits no order. */
  function divergent(lastRead: number): Op[] {
    const rows: [Op['type'], number, string, unknown, number, string][] = [
      ['invoke', 1, 'write', ['k', 1], 1, 'n1'],
      ['ok', 1, 'write', ['k', 1], 2, 'n1'],
      ['invoke', 2, 'write', ['k', 2], 3, 'n2'],
      ['ok', 2, 'write', ['k', 2], 4, 'n2'],
      ['invoke', 2, 'cas', ['k', [2, 3]], 5, 'n2'],
      ['ok', 2, 'cas', ['k', [2, 3]], 6, 'n2'],
      ['invoke', 1, 'cas', ['k', [1, 4]], 7, 'n1'],
      ['ok', 1, 'cas', ['k', [1, 4]], 8, 'n1'],
      ['invoke', 3, 'read', ['k', null], 11, 'n2'],
      ['ok', 3, 'read', ['k', lastRead], 12, 'n2'],
    ];
    return rows.map(([type, process, f, value, ms, node], i) => ({
      index: i,
      time: ms * 1e6,
      type,
      process,
      f,
      value,
      node,
    }));
  }

  it('a key that holds once the primary that gave up its data is left out is a note, with the ops it left out', async () => {
    const alone = await linearizabilityChecker(10_000).check(input(divergent(3), redisLike));
    expect(alone[0]).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
    expect(alone[0].message).toContain('cannot be placed');
    const [finding] = await linearizabilityChecker(10_000).check({
      ...input(divergent(3), redisLike),
      leaderChanges: twoPrimaries,
    });
    expect(finding).toMatchObject({ kind: 'durability', name: 'failover-loss', severity: 'note' });
    expect(finding.message).toContain(
      'split brain: n1 and n2 both led from 0.001 s to 0.010 s, key "k" linearizable without the 2 op(s) n1 served then',
    );
  });

  it('a value of the primary that gave up its data, read on the one that kept its own, stays a bug', async () => {
    const [finding] = await linearizabilityChecker(10_000).check({
      ...input(divergent(4), redisLike),
      leaderChanges: twoPrimaries,
    });
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
    expect(finding.severity).toBeUndefined();
  });

  it('no split brain while neither primary has converged, and none when the ops ran after it ended', async () => {
    const open = await linearizabilityChecker(10_000).check({
      ...input(divergent(3), redisLike),
      leaderChanges: twoPrimaries.slice(0, 2),
    });
    expect(open[0]).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
    const early = await linearizabilityChecker(10_000).check({
      ...input(divergent(3), redisLike),
      leaderChanges: [
        at(0, 'n1', 'ready', 'leader'),
        at(0.2, 'n2', 'ready', 'leader'),
        at(0.5, 'n1', 'sync-finished'),
      ],
    });
    expect(early[0]).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });

  it("with a disk loss beyond the declared durability, the data-loss keys are that contract's and the rest the split brain's", async () => {
    // Key "x" loses the write of 2 with no leader change in its span; key "k" is the split brain's.
    const lost = lostWrite().map((o) => ({ ...o, index: o.index + 100, time: o.time + 20e6, node: 'n2' }));
    const ops = [...divergent(3), ...lost];
    const tornAll: ScheduleCheckInput['faults'] = [
      { atMs: 0, f: 'torn-write', value: 'all', nodes: ['n1', 'n2', 'n3'] },
    ];
    const [finding] = await linearizabilityChecker(10_000).check({
      ...input(ops, redisLike, tornAll),
      leaderChanges: twoPrimaries,
    });
    expect(finding).toMatchObject({ kind: 'durability', name: 'failover-loss', severity: 'note' });
    expect(finding.message).toContain(
      '1 other key(s) lost data after disks lost writes beyond what redis declares they survive (process-crash: torn-write n1,n2,n3 at 0.0 s)',
    );
    // Within the contract (no disk loss), the lost write stays a bug.
    const [without] = await linearizabilityChecker(10_000).check({
      ...input(ops, redisLike),
      leaderChanges: twoPrimaries,
    });
    expect(without).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });
});

describe('linearizabilityChecker against a declared durability', () => {
  const kill = { atMs: 1000, f: 'kill' as const, value: 'leader' as const, nodes: ['n1'] };
  const loseOne = { atMs: 2000, f: 'lose-unfsynced' as const, value: 'one' as const, nodes: ['n2'] };
  const loseAll = { ...loseOne, value: 'all' as const, nodes: ['n1', 'n2', 'n3'] };

  it('a write lost with no declaration is a linearizability bug', async () => {
    const [finding] = await linearizabilityChecker(10_000).check(
      input(lostWrite(), { name: 's' }, [loseAll]),
    );
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });

  it('a write lost after kills alone stays a linearizability bug (a kill loses nothing written)', async () => {
    const system = { name: 's', durability: 'disk-loss' as const };
    const [finding] = await linearizabilityChecker(10_000).check(input(lostWrite(), system, [kill]));
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });

  it('a write lost to disk losses the system declares it survives breaks its contract, naming them', async () => {
    const system = { name: 's', durability: 'minority-disk-loss' as const };
    const [finding] = await linearizabilityChecker(10_000).check(input(lostWrite(), system, [kill, loseOne]));
    expect(finding).toMatchObject({ kind: 'durability', name: 'broken-contract' });
    expect(finding.severity).toBeUndefined();
    expect(finding.message).toContain(
      'declares they survive minority-disk-loss (disks lost unfsynced writes: lose-unfsynced n2 at 2.0 s)',
    );
  });

  it('a write lost to disk losses beyond the declaration is a note, not a bug', async () => {
    const system = { name: 's', durability: 'minority-disk-loss' as const };
    const [finding] = await linearizabilityChecker(10_000).check(input(lostWrite(), system, [kill, loseAll]));
    expect(finding).toMatchObject({ kind: 'durability', name: 'beyond-contract', severity: 'note' });
    expect(finding.message).toContain('3 of 3 nodes (n1, n2, n3) dropped unfsynced writes');
  });

  it('checks the contract the user states (--durability) instead of the declared one, and says so', async () => {
    const system = { name: 'redis', durability: 'process-crash' as const };
    const stated = { level: 'disk-loss' as const, statedBy: 'user' as const };
    const [declared] = await linearizabilityChecker(10_000).check(input(lostWrite(), system, [loseAll]));
    expect(declared).toMatchObject({ kind: 'durability', name: 'beyond-contract', severity: 'note' });
    const [finding] = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), system, [loseAll]),
      durability: stated,
    });
    expect(finding).toMatchObject({ kind: 'durability', name: 'broken-contract' });
    expect(finding.severity).toBeUndefined();
    expect(finding.message).toContain(
      'acknowledged writes lost although the run checks that they survive disk-loss (--durability; redis declares process-crash) (disks lost unfsynced writes: lose-unfsynced n1,n2,n3 at 2.0 s): key "x": lost acknowledged write',
    );
    expect(finding.evidence).toMatchObject({
      anomaly: 'lost-write',
      contract: { durability: 'disk-loss', statedBy: 'user', withinContract: true },
    });
    // A weaker stated contract turns the declared one's bug into a note.
    const [note] = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), { name: 's', durability: 'disk-loss' }, [loseAll]),
      durability: { level: 'process-crash', statedBy: 'user' },
    });
    expect(note).toMatchObject({ kind: 'durability', name: 'beyond-contract', severity: 'note' });
    expect(note.message).toContain('writes lost beyond what the run checks (--durability) (process-crash)');
  });

  it('judges how many nodes lost unfsynced writes against a minority', () => {
    const one = { atMs: 0, f: 'lose-unfsynced', nodes: ['n2'] };
    expect(judgeDurability('minority-disk-loss', [one], 3)?.withinContract).toBe(true);
    expect(judgeDurability('minority-disk-loss', [one, { ...one, nodes: ['n3'] }], 3)?.withinContract).toBe(
      false,
    );
    expect(judgeDurability('process-crash', [one], 3)?.withinContract).toBe(false);
    expect(judgeDurability('disk-loss', [one, { ...one, nodes: ['n1', 'n3'] }], 3)?.withinContract).toBe(
      true,
    );
    expect(judgeDurability('process-crash', [{ atMs: 0, f: 'kill', nodes: ['n1'] }], 3)).toBeUndefined();
  });

  it('judges a kill while the disk refused writes as a loss of what the disk had not taken', () => {
    // Modelled on a redis control (seed 4): disk-full on every node, writes acknowledged from memory
    // (everysec keeps a failed AOF write in its buffer), then every node killed before the heal.
    const full = { atMs: 17_655, f: 'disk-full', nodes: ['n1', 'n2', 'n3'] };
    const killAll = { atMs: 26_520, f: 'kill', nodes: ['n1', 'n2', 'n3'] };
    expect(judgeDurability('process-crash', [full, killAll], 3)).toEqual({
      withinContract: false,
      dataLossFaults: ['kill n1,n2,n3 at 26.5 s while disk-full refused its writes'],
      beyond:
        'kill n1,n2,n3 at 26.5 s while disk-full refused its writes dropped writes the disk had not taken, and the contract is only that writes survive a process crash',
    });
    expect(judgeDurability('minority-disk-loss', [{ ...full, nodes: ['n2'] }, killAll], 3)).toEqual({
      withinContract: true,
      dataLossFaults: ['kill n2 at 26.5 s while disk-full refused its writes'],
    });
    // fsync-error fails fsync only: the writes are in the file, a kill loses none of them.
    expect(judgeDurability('process-crash', [{ ...full, f: 'fsync-error' }, killAll], 3)).toBeUndefined();
    // Healed before the kill, on another node, or a disk only slowed: a kill loses nothing written.
    const heal = { atMs: 20_000, f: 'heal-disk', nodes: ['n1', 'n2', 'n3'] };
    expect(judgeDurability('process-crash', [full, heal, killAll], 3)).toBeUndefined();
    expect(
      judgeDurability(
        'process-crash',
        [
          { ...full, nodes: ['n3'] },
          { ...killAll, nodes: ['n1'] },
        ],
        3,
      ),
    ).toBeUndefined();
    expect(judgeDurability('process-crash', [{ ...full, f: 'slow-disk' }, killAll], 3)).toBeUndefined();
    expect(judgeDurability('process-crash', [killAll, { ...full, atMs: 30_000 }], 3)).toBeUndefined();
  });

  it('judges a torn-write as it judges a lose-unfsynced, and counts their nodes together', async () => {
    const torn = { atMs: 3000, f: 'torn-write' as const, value: 'one' as const, nodes: ['n3'] };
    expect(judgeDurability('minority-disk-loss', [torn], 3)).toEqual({
      withinContract: true,
      dataLossFaults: ['torn-write n3 at 3.0 s'],
    });
    expect(judgeDurability('minority-disk-loss', [loseOne, torn], 3)?.withinContract).toBe(false);
    expect(judgeDurability('process-crash', [torn], 3)?.beyond).toBe(
      'torn-write n3 at 3.0 s dropped unfsynced writes, and the contract is only that writes survive a process crash',
    );
    const system = { name: 's', durability: 'disk-loss' as const };
    const [finding] = await linearizabilityChecker(10_000).check(input(lostWrite(), system, [torn]));
    expect(finding).toMatchObject({ kind: 'durability', name: 'broken-contract' });
    expect(finding.message).toContain('disks lost unfsynced writes: torn-write n3 at 3.0 s');
  });
});

/** 1 and 2 added and acknowledged, then a read that holds only 1: 2 was lost. */
function lostElement(): Op[] {
  const rows: [Op['type'], number, string, unknown][] = [
    ['invoke', 0, 'add', ['s', 1]],
    ['ok', 0, 'add', ['s', 1]],
    ['invoke', 0, 'add', ['s', 2]],
    ['ok', 0, 'add', ['s', 2]],
    ['invoke', 1, 'read', ['s', null]],
    ['ok', 1, 'read', ['s', [1]]],
  ];
  return rows.map(([type, process, f, value], i) => ({ index: i, time: i * 1e6, type, process, f, value }));
}

describe('setChecker against a declared durability', () => {
  const kill = { atMs: 1000, f: 'kill' as const, value: 'leader' as const, nodes: ['n1'] };
  const loseOne = { atMs: 2000, f: 'lose-unfsynced' as const, value: 'one' as const, nodes: ['n2'] };
  const loseAll = { ...loseOne, value: 'all' as const, nodes: ['n1', 'n2', 'n3'] };
  const system = { name: 's', durability: 'minority-disk-loss' as const };

  it('elements lost after kills alone, or with no declaration, are a set bug', async () => {
    const [killed] = await setChecker().check(input(lostElement(), system, [kill]));
    expect(killed).toMatchObject({ kind: 'set', name: 'lost-elements' });
    const [undeclared] = await setChecker().check(input(lostElement(), { name: 's' }, [loseAll]));
    expect(undeclared).toMatchObject({ kind: 'set', name: 'lost-elements' });
  });

  it('elements lost to disk losses the system declares it survives break its contract', async () => {
    const findings = await setChecker().check(input(lostElement(), system, [kill, loseOne]));
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ kind: 'durability', name: 'broken-contract' });
    expect(findings[0].severity).toBeUndefined();
    expect(findings[0].message).toContain(
      'declares they survive minority-disk-loss (disks lost unfsynced writes: lose-unfsynced n2 at 2.0 s): 1 lost element(s) of 2 added',
    );
    expect(findings[0].evidence).toMatchObject({
      type: 'lost',
      elements: ['2'],
      contract: { durability: 'minority-disk-loss', withinContract: true },
    });
  });

  it('elements lost to disk losses beyond the declaration are a note; the user may state more', async () => {
    const [note] = await setChecker().check(input(lostElement(), system, [loseAll]));
    expect(note).toMatchObject({ kind: 'durability', name: 'beyond-contract', severity: 'note' });
    expect(note.evidence).toMatchObject({ withinContract: false, set: { type: 'lost', count: 1 } });
    const [stated] = await setChecker().check({
      ...input(lostElement(), system, [loseAll]),
      durability: { level: 'disk-loss', statedBy: 'user' },
    });
    expect(stated).toMatchObject({ kind: 'durability', name: 'broken-contract' });
    expect(stated.severity).toBeUndefined();
  });
});

describe('transactionalChecker', () => {
  it('turns anomalies the default model forbids into a txn finding with a page', async () => {
    const [finding, ...rest] = await transactionalChecker('list-append').check(input(writeSkew()));
    expect(rest).toEqual([]);
    expect(finding.kind).toBe('txn');
    expect(finding.name).toBe('not-strict-serializable');
    expect(finding.message).toBe(
      'not strict-serializable (list-append): G2-item ×1; G2-item: T2 read key "x" without 1, which T3 ' +
        'appended (rw); T3 read key "y" without 1, which T2 appended (rw); so T2 would have to come before itself.',
    );
    expect(finding.evidence).toMatchObject({
      valid: false,
      anomalyTypes: ['G2-item'],
      anomalyCounts: { 'G2-item': 1 },
    });
    expect(finding.html).toContain('<section id="G2-item">');
  });

  it('checks against the model the system declares', async () => {
    const system = { transactions: { workloads: ['list-append'], consistency: 'snapshot-isolation' } };
    const findings = await transactionalChecker('list-append').check(input(writeSkew(), system as never));
    expect(findings).toEqual([]);
  });

  it('passes a history without anomalies, and skips nemesis ops', async () => {
    index = 0;
    const ops = [
      op('invoke', 0, [['append', 'x', 1]]),
      { index: index++, time: index, type: 'info', process: 'nemesis', f: 'kill', value: ['n1'] } as Op,
      op('ok', 0, [['append', 'x', 1]]),
      op('invoke', 1, [['r', 'x', null]]),
      op('ok', 1, [['r', 'x', [1]]]),
    ];
    expect(await transactionalChecker('list-append').check(input(ops))).toEqual([]);
  });

  it('reports a history whose replies do not fit the checker', async () => {
    index = 0;
    const ops = [op('invoke', 0, [['r', 'x', null]]), op('ok', 0, [['r', 'x', 5]])];
    const [finding] = await transactionalChecker('list-append').check(input(ops));
    expect(finding).toMatchObject({ kind: 'txn', name: 'malformed-history' });
    expect(finding.message).toContain('list');
  });
});

describe('bankChecker', () => {
  /** Reads of the default bank (5 accounts, 100 in all) by one process, each balance list a read. */
  function reads(...balances: number[][]): Op[] {
    return balances.flatMap((b, i): Op[] => [
      { index: 2 * i, time: 2 * i, type: 'invoke', process: 0, f: 'read', value: null },
      {
        index: 2 * i + 1,
        time: 2 * i + 1,
        type: 'ok',
        process: 0,
        f: 'read',
        value: Object.fromEntries(b.entries()),
      },
    ]);
  }

  it('passes reads that conserve the total', async () => {
    expect(await bankChecker().check(input(reads([20, 20, 20, 20, 20], [25, 15, 20, 20, 20])))).toEqual([]);
  });

  it('reports one finding per kind of error, naming the first reads and counting them all', async () => {
    const ops = reads(
      [20, 20, 20, 20, 21],
      [20, 20, 20, 20, 19],
      [20, 20, 20, 20, 22],
      [20, 20, 20, 20, 23],
      [-1, 21, 20, 20, 40],
    );
    const findings = await bankChecker().check(input(ops));
    expect(findings.map((f) => [f.kind, f.name])).toEqual([
      ['bank', 'wrong-total'],
      ['bank', 'negative-value'],
    ]);
    expect(findings[0].message).toBe(
      '4 of 5 bank reads saw the wrong total (total 100 over 5 accounts): ' +
        `wrong total 101 (expected 100) in process 0's read (op 0, ok at op 1), balances {"0":20,"1":20,"2":20,"3":20,"4":21}: ` +
        'unexplained: 1 too much, which no transfer in flight, whole or half, explains against the opening balances; ' +
        `wrong total 99 (expected 100) in process 0's read (op 2, ok at op 3), balances {"0":20,"1":20,"2":20,"3":20,"4":19}: ` +
        'unexplained: 1 missing, which no transfer in flight, whole or half, explains against the opening balances; ' +
        `wrong total 102 (expected 100) in process 0's read (op 4, ok at op 5), balances {"0":20,"1":20,"2":20,"3":20,"4":22}: ` +
        'unexplained: 2 too much, which no transfer in flight, whole or half, explains against the opening balances (and 1 more)',
    );
    expect(findings[0].evidence).toMatchObject({
      count: 4,
      reads: 5,
      counts: { 'wrong-total': 4, 'negative-value': 1, 'nil-balance': 0, 'unexpected-key': 0 },
    });
    expect(findings[1].message).toMatch(
      /^1 of 5 bank reads saw a negative balance .*account\(s\) "0" negative$/,
    );
  });

  it('reports a history that is not a bank’s', async () => {
    const ops: Op[] = [
      { index: 0, time: 0, type: 'invoke', process: 0, f: 'read', value: null },
      { index: 1, time: 1, type: 'ok', process: 0, f: 'read', value: 100 },
    ];
    const [finding] = await bankChecker().check(input(ops));
    expect(finding).toMatchObject({ kind: 'bank', name: 'malformed-history' });
  });
});

describe('linearizabilityChecker out of time', () => {
  it('says it could not tell (an unknown verdict with the reason), not that the history passed', async () => {
    // 18 concurrent writes of 0, 1, 2 and a reader seeing the value change once more than there
    // are writes: not linearizable, but only a search through the writes' orders can say so.
    const rows: [Op['type'], number, string, unknown][] = [];
    const writers = 18;
    for (let p = 0; p < writers; p++) rows.push(['invoke', p, 'write', ['k', p % 3]]);
    for (let seen = 0; seen <= writers; seen++) {
      rows.push(['invoke', writers, 'read', ['k', null]], ['ok', writers, 'read', ['k', seen % 3]]);
    }
    for (let p = 0; p < writers; p++) rows.push(['ok', p, 'write', ['k', p % 3]]);
    const ops = rows.map(([type, process, f, value], i) => ({
      index: i,
      time: i * 1e6,
      type,
      process,
      f,
      value,
    }));
    const found = await linearizabilityChecker(0).check(input(ops));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      kind: 'linearizability',
      name: 'unknown',
      severity: 'note',
      unknown: true,
    });
    expect(found[0].message).toBe(
      'linearizability of 37 ops over 1 key(s) could not be decided within the 0 s time limit',
    );
  });
});

describe("the reset's nemesis ops in a schedule's history", () => {
  /** The reset as the campaign writes it: each family's undo, an info pair, before the final reads. */
  function withReset(ops: readonly Op[]): Op[] {
    const at = ops.length - 2; // before the last op's invocation and completion
    const time = ops[at].time;
    const reset: Op[] = [
      { index: 0, time, type: 'info', process: 'nemesis', f: 'stop-partition', value: null },
      { index: 0, time, type: 'info', process: 'nemesis', f: 'stop-partition', value: null },
      { index: 0, time, type: 'info', process: 'nemesis', f: 'resume', value: ['n1'] },
      { index: 0, time, type: 'info', process: 'nemesis', f: 'resume', value: ['n1'] },
      { index: 0, time, type: 'info', process: 'nemesis', f: 'start', value: ['n2', 'n3'] },
      {
        index: 0,
        time,
        type: 'info',
        process: 'nemesis',
        f: 'start',
        value: ['n2', 'n3'],
        error: 'start n3: x',
      },
    ];
    return [...ops.slice(0, at), ...reset, ...ops.slice(at)].map((op, index) => ({ ...op, index }));
  }

  /** What each finding says, its op indexes aside (the reset's ops take indexes of their own). */
  const said = (findings: readonly { kind: string; name: string; message: string }[]): string[] =>
    findings.map((f) => `${f.kind}/${f.name}: ${f.message.replace(/\bop \d+/g, 'op #')}`);

  it('change no checker’s verdict', async () => {
    const system = { name: 's' };
    const cases: [string, ScheduleChecker, Op[]][] = [
      ['linearizable, lost write', linearizabilityChecker(10_000), lostWrite()],
      ['linearizable, valid', linearizabilityChecker(10_000), lostWrite().slice(0, 4)],
      ['set, lost element', setChecker(), lostElement()],
      ['transactional, write skew', transactionalChecker('list-append'), writeSkew()],
    ];
    for (const [name, checker, ops] of cases) {
      const plain = said(await checker.check(input(ops, system)));
      const reset = said(await checker.check(input(withReset(ops), system)));
      expect(reset, name).toEqual(plain);
    }
    expect(
      said(await linearizabilityChecker(10_000).check(input(withReset(lostWrite()), system))),
    ).toHaveLength(1);
  });
});

describe('linearizabilityChecker after a disk loss: state going back to an earlier value', () => {
  const loseAll = { atMs: 4, f: 'lose-unfsynced' as const, value: 'all' as const, nodes: ['n1', 'n2', 'n3'] };
  /**
   * x = 1, then x = 2 acknowledged; every disk loses what it had not fsynced; then a cas from 1
   * succeeds (a node came back holding 1) and a read sees its value. No lost write, stale read or
   * resurrected value explains the cas: only the state going back to 1.
   */
  function casOnOlderCopy(withLoss = true): Op[] {
    type Row = [Op['type'], number | 'nemesis', string, unknown];
    const rows: Row[] = [
      ['invoke', 0, 'write', ['x', 1]],
      ['ok', 0, 'write', ['x', 1]],
      ['invoke', 0, 'write', ['x', 2]],
      ['ok', 0, 'write', ['x', 2]],
      ...(withLoss
        ? ([
            ['info', 'nemesis', 'lose-unfsynced', 'all'],
            ['info', 'nemesis', 'lose-unfsynced', ['n1', 'n2', 'n3']],
          ] satisfies Row[])
        : []),
      ['invoke', 1, 'cas', ['x', [1, 5]]],
      ['ok', 1, 'cas', ['x', [1, 5]]],
      ['invoke', 2, 'read', ['x', null]],
      ['ok', 2, 'read', ['x', 5]],
    ];
    return rows.map(([type, process, f, value], i) => ({ index: i, time: i * 1e6, type, process, f, value }));
  }

  it('is a note beyond the declared durability, saying the state went back', async () => {
    const system = { name: 's', durability: 'minority-disk-loss' as const };
    const [finding] = await linearizabilityChecker(10_000).check(input(casOnOlderCopy(), system, [loseAll]));
    expect(finding).toMatchObject({ kind: 'durability', name: 'beyond-contract', severity: 'note' });
    expect(finding.message).toContain(
      'key(s) x: linearizable if state went back to an earlier value after the disk losses',
    );
    expect(finding.evidence).toMatchObject({ rolledBack: ['x'] });
  });

  it('breaks a contract the losses stayed within, and is a bug with no disk loss or no declaration', async () => {
    const [broken] = await linearizabilityChecker(10_000).check(
      input(casOnOlderCopy(), { name: 's', durability: 'disk-loss' }, [loseAll]),
    );
    expect(broken).toMatchObject({ kind: 'durability', name: 'broken-contract' });
    expect(broken.severity).toBeUndefined();
    const [noLoss] = await linearizabilityChecker(10_000).check(
      input(casOnOlderCopy(false), { name: 's', durability: 'minority-disk-loss' }, []),
    );
    expect(noLoss).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
    const [undeclared] = await linearizabilityChecker(10_000).check(
      input(casOnOlderCopy(), { name: 's' }, [loseAll]),
    );
    expect(undeclared).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });

  it('does not excuse a value the key never held before the loss', async () => {
    const ops = casOnOlderCopy().map((op) => (op.f === 'cas' ? { ...op, value: ['x', [7, 5]] } : op));
    const [finding] = await linearizabilityChecker(10_000).check(
      input(ops, { name: 's', durability: 'minority-disk-loss' }, [loseAll]),
    );
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });
});

describe('linearizabilityChecker after a node died by itself while its disk refused writes', () => {
  const system = { name: 'redis', durability: 'process-crash' as const };
  const full = { atMs: 1, f: 'disk-full' as const, value: 'all' as const, nodes: ['n1', 'n2', 'n3'] };
  const death = { atMs: 4, timeNs: 4e6, node: 'n1', because: 'disk-full' };

  it('a write lost then is a loss beyond a process-crash contract (a note), as after a kill', async () => {
    const [note] = await linearizabilityChecker(10_000).check({
      ...input(lostWrite(), system, [full]),
      deathsWhileWritesRefused: [death],
    });
    expect(note).toMatchObject({ kind: 'durability', name: 'beyond-contract', severity: 'note' });
    expect(note.message).toContain('exit n1 at 0.0 s while disk-full refused its writes');
    const [finding] = await linearizabilityChecker(10_000).check(input(lostWrite(), system, [full]));
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });
});
