import { describe, expect, it } from 'vitest';

import { checkInvariants } from '../../src/check/invariants.js';
import type { Event } from '../../src/core/event.js';
import { SimKvraft, type SimKvraftOptions } from '../../src/sim/kvraft.js';
import type { KvraftBug } from '../../src/systems/kvraft/bugs.js';

// Each kvraft bug switch, driven in the simulated world through the fault sequence its real-process
// test (test/systems/kvraft/bugs.test.ts) uses, found with the switch and clean without. Pinned
// election timeouts make the order of elections deterministic, as they do there.

const FAST = [150, 200] as const;
const SLOW = [700, 1000] as const;
const NEVER = [60_000, 60_001] as const;
const SEED = 7;

function cluster(
  nodes: number,
  bug: KvraftBug | undefined,
  options: Partial<SimKvraftOptions> = {},
): SimKvraft {
  return new SimKvraft({ seed: SEED, nodes, node: { bugs: bug ? [bug] : [] }, ...options });
}

/** The world's probe events as the invariant checks read them (virtual ms as ns). */
function asEvents(sim: SimKvraft): Event[] {
  return sim.events().map((e) => ({
    ts: Math.round(e.timeMs * 1e6),
    node: e.node,
    source: 'probe',
    type: e.type,
    ...(e.attrs ? { attrs: e.attrs } : {}),
  }));
}

async function ackBeforeCommit(bugOn: boolean) {
  const sim = cluster(3, bugOn ? 'ack-before-commit' : undefined);
  sim.startAll();
  const leader = await sim.waitLeader();
  const followers = sim.nodes.filter((n) => n !== leader.id);
  sim.isolate(leader.id);
  const written = await sim.write(leader.id, 'x', 1, 1000);
  sim.kill(leader.id);
  sim.heal();
  const next = await sim.waitLeader(followers, 5000, leader.term);
  return { written, readBack: await sim.read(next.id, 'x') };
}

async function staleRead(bugOn: boolean) {
  const sim = cluster(3, bugOn ? 'stale-read' : undefined);
  sim.startAll();
  const old = await sim.waitLeader();
  expect(await sim.write(old.id, 'x', 1)).toEqual({ type: 'ok' });
  sim.isolate(old.id);
  const next = await sim.waitLeader(
    sim.nodes.filter((n) => n !== old.id),
    5000,
    old.term,
  );
  expect(await sim.write(next.id, 'x', 2)).toEqual({ type: 'ok' });
  return sim.read(old.id, 'x', 1000);
}

async function voteWithoutLogCheck(bugOn: boolean) {
  const sim = cluster(3, bugOn ? 'vote-without-log-check' : undefined);
  sim.startAll();
  const leader = await sim.waitLeader();
  const stale = sim.nodes.find((n) => n !== leader.id)!;
  sim.isolate(stale);
  expect(await sim.write(leader.id, 'x', 1)).toEqual({ type: 'ok' });
  const committed = sim.statusNow(leader.id)!.commit;
  await sim.world.runUntil('the cut-off follower to raise its term', () =>
    (sim.statusNow(stale)?.term ?? 0) >= leader.term + 2 ? true : undefined,
  );
  sim.heal();
  await sim.world.run(1500);
  const current = await sim.waitLeader(sim.nodes.filter((n) => sim.exitOf(n) === undefined));
  const staleLed = sim
    .events(stale)
    .some((e) => e.type === 'become-leader' && Number(e.attrs?.index ?? 0) < committed);
  const crashed = sim.nodes.filter((n) => sim.output(n).includes('ASSERTION FAILED: truncating committed'));
  const readBack = await sim.read(current.id, 'x', 1000);
  return { staleLed, crashed, readBack };
}

async function lazyVote(bugOn: boolean) {
  const sim = cluster(3, bugOn ? 'lazy-vote' : undefined);
  const bugs: KvraftBug[] = bugOn ? ['lazy-vote'] : [];
  sim.startAll(
    {},
    {
      n1: { bugs, electionMs: FAST },
      n2: { bugs, electionMs: [700, 750] },
      n3: { bugs, electionMs: [2500, 2550] },
    },
  );
  const first = await sim.waitLeader();
  expect(first.id).toBe('n1');
  const led = sim.statusNow('n1')!.lastIndex;
  await sim.world.runUntil("n2 and n3 to hold n1's no-op", () =>
    ['n2', 'n3'].every((n) => (sim.statusNow(n)?.lastIndex ?? 0) >= led) ? true : undefined,
  );
  sim.delay(500, [['n2', 'n3']]);
  sim.kill('n1');
  const vote = await sim.world.runUntil(
    'n3 to vote for n2',
    () =>
      sim
        .events('n3')
        .find(
          (e) =>
            e.type === 'vote-granted' && e.attrs?.candidate === 'n2' && Number(e.attrs.term) > first.term,
        ),
    5000,
  );
  sim.kill('n3');
  const term = vote.attrs!.term as number;
  expect(term).toBe(first.term + 1);
  sim.isolate('n2');
  sim.start('n3', { bugs, electionMs: NEVER });
  sim.start('n1', { bugs, electionMs: FAST });
  await sim.world.runUntil('n2 to lead', () =>
    sim.events('n2').some((e) => e.type === 'become-leader' && e.attrs?.term === term) ? true : undefined,
  );
  await sim.waitLeader(['n1'], 5000);
  await sim.world.run(100);
  return { term, violations: checkInvariants(asEvents(sim)) };
}

async function snapshotUncommittedConfig(bugOn: boolean) {
  const sim = cluster(5, undefined);
  const bugs: KvraftBug[] = bugOn ? ['snapshot-uncommitted-config'] : [];
  sim.startAll(
    { bugs, snapshotEvery: 1000, electionMs: SLOW },
    {
      n1: { bugs, snapshotEvery: 1000, electionMs: FAST },
      n3: { bugs, snapshotEvery: 8, electionMs: NEVER },
    },
  );
  const first = await sim.waitLeader();
  expect(first.id).toBe('n1');
  sim.isolate('n3');
  for (let i = 0; i < 12; i++) expect(await sim.write('n1', `k${i}`, i)).toEqual({ type: 'ok' });
  const majority = ['n2', 'n4', 'n5'];
  sim.isolate('n1', majority);
  const change = sim.requestLater('n1', { op: 'remove-member', node: 'n5' }, 3000);
  const appended = await sim.world.runUntil('n1 to append the configuration', () => {
    const s = sim.statusNow('n1');
    return s && s.members.length === 4 ? s : undefined;
  });
  expect(appended.lastIndex).toBe(appended.commit + 1);
  const next = await sim.waitLeader(majority, 5000, first.term);
  sim.reconnect('n3', ['n1']);
  const snapshot = await sim.world.runUntil('n3 to take a snapshot', () =>
    sim.events('n3').find((e) => e.type === 'snapshot-taken'),
  );
  sim.kill('n1');
  sim.reconnect('n3', majority);
  await sim.world.runUntil('n3 to follow the new leader or crash', () => {
    if (sim.exitOf('n3')) return true;
    const s = sim.statusNow('n3');
    return s && s.term >= next.term && s.members.length === 5 ? true : undefined;
  });
  await sim.world.settle(change);
  await sim.world.run(100);
  return {
    snapshotConfigIndex: snapshot.attrs?.configIndex,
    configIndex: appended.lastIndex,
    exit: sim.exitOf('n3'),
    output: sim.output('n3'),
    rolledBack: sim.events('n3').some((e) => e.type === 'config-rolled-back'),
  };
}

async function splitTxn(bugOn: boolean) {
  const sim = cluster(3, bugOn ? 'split-txn' : undefined);
  sim.startAll();
  const leader = await sim.waitLeader();
  const a = sim.clientOf(leader.id);
  const b = sim.clientOf(leader.id);
  const results = await sim.world.settle(
    Promise.all([
      a.txn([
        ['r', 'x', null],
        ['append', 'y', 1],
      ]),
      b.txn([
        ['r', 'y', null],
        ['append', 'x', 1],
      ]),
    ]),
  );
  await Promise.all([a.close(), b.close()]);
  return results.map((r) => (r.type === 'ok' ? r.value[0][2] : r.type));
}

/**
 * rejoined-restart-assert: n3 removed, wiped and added back as a joiner learns a configuration that
 * includes it; killed and started again as a joiner, the switch's check fails.
 */
async function rejoinedRestart(bugOn: boolean) {
  const sim = cluster(3, bugOn ? 'rejoined-restart-assert' : undefined);
  const bugs: KvraftBug[] = bugOn ? ['rejoined-restart-assert'] : [];
  sim.startAll({ bugs, electionMs: SLOW }, { n1: { bugs, electionMs: FAST } });
  await sim.waitLeader();
  expect(await sim.changeMember('remove-member', 'n3')).toBe(true);
  sim.kill('n3');
  sim.world.wipeDisk('n3');
  sim.start('n3', { bugs, join: true });
  expect(await sim.changeMember('add-member', 'n3')).toBe(true);
  await sim.world.runUntil('n3 to learn a configuration with itself', () =>
    sim.statusNow('n3')?.members.includes('n3') ? true : undefined,
  );
  sim.kill('n3');
  sim.start('n3', { bugs, join: true });
  await sim.world.run(2000);
  return { exit: sim.exitOf('n3'), output: sim.output('n3') };
}

describe('kvraft bug switches in the simulated world', () => {
  it('ack-before-commit: an acknowledged write is lost after the leader dies; clean without', async () => {
    expect(await ackBeforeCommit(true)).toEqual({
      written: { type: 'ok' },
      readBack: { type: 'ok', value: null },
    });
    const clean = await ackBeforeCommit(false);
    expect(clean.written.type).toBe('info');
    expect(clean.readBack).toEqual({ type: 'ok', value: null });
  });

  it('stale-read: a partitioned leader returns an overwritten value; clean without', async () => {
    expect(await staleRead(true)).toEqual({ type: 'ok', value: 1 });
    expect((await staleRead(false)).type).not.toBe('ok');
  });

  it('vote-without-log-check: a stale node leads and overwrites a committed write; clean without', async () => {
    const found = await voteWithoutLogCheck(true);
    expect(found.staleLed).toBe(true);
    expect(found.crashed.length > 0 || (found.readBack.type === 'ok' && found.readBack.value === null)).toBe(
      true,
    );
    expect(await voteWithoutLogCheck(false)).toEqual({
      staleLed: false,
      crashed: [],
      readBack: { type: 'ok', value: 1 },
    });
  });

  it('lazy-vote: a restarted voter votes twice in one term and two nodes lead it; clean without', async () => {
    const { term, violations } = await lazyVote(true);
    const names = violations.map((v) => v.name);
    expect(names).toContain('election-safety');
    expect(names).toContain('vote-once-per-term');
    expect(violations.find((v) => v.name === 'election-safety')!.message).toBe(
      `two leaders in term ${term}: n2 and n1`,
    );
    expect((await lazyVote(false)).violations).toEqual([]);
  });

  it('snapshot-uncommitted-config: rolling back the configuration crashes the node; clean without', async () => {
    const found = await snapshotUncommittedConfig(true);
    expect(found.snapshotConfigIndex).toBe(found.configIndex);
    expect(found.exit).toEqual({ code: 1 });
    expect(found.output).toMatch(/ASSERTION FAILED: configuration rollback from index \d+/);
    const clean = await snapshotUncommittedConfig(false);
    expect(clean.snapshotConfigIndex).toBe(0);
    expect(clean.exit).toBeUndefined();
    expect(clean.rolledBack).toBe(true);
    expect(clean.output).not.toContain('ASSERTION FAILED');
  });

  it('split-txn: two transactions each miss the append of the other; clean without', async () => {
    expect(await splitTxn(true)).toEqual([null, null]);
    const reads = await splitTxn(false);
    expect(reads.filter((r) => r === null)).toHaveLength(1);
    expect(reads.filter((r) => Array.isArray(r) && r[0] === 1)).toHaveLength(1);
  });

  it('rejoined-restart-assert: a rejoined node restarted as a joiner fails its assertion; clean without', async () => {
    const found = await rejoinedRestart(true);
    expect(found.exit).toEqual({ code: 1 });
    expect(found.output).toMatch(/ASSERTION FAILED: n3 restarted as a joiner onto a stored configuration/);
    const clean = await rejoinedRestart(false);
    expect(clean.exit).toBeUndefined();
    expect(clean.output).not.toContain('ASSERTION FAILED');
  });
});
