import { checkInvariants } from '../../../src/check/invariants.js';
import type { Event } from '../../../src/core/event.js';
import type { StorageContract } from '../../../src/sim/disk.js';
import { SimKvraft, type SimKvraftOptions } from '../../../src/sim/kvraft.js';
import type { KvraftBug } from '../../../src/systems/kvraft/bugs.js';

// Each kvraft bug switch's fault sequence in the simulated world, as its real-process test
// (test/systems/kvraft/bugs.test.ts) drives it. Pinned election timeouts make the order of elections
// deterministic, as they do there. Each takes the world's seed.

/** A step of the sequence that did not go as scripted: the run says nothing about the switch. */
function must(holds: boolean, what: string): void {
  if (!holds) throw new Error(`the sequence did not go as scripted: ${what}`);
}

const FAST = [150, 200] as const;
const SLOW = [700, 1000] as const;
const NEVER = [60_000, 60_001] as const;

function cluster(
  seed: number,
  nodes: number,
  bug: KvraftBug | undefined,
  options: Partial<SimKvraftOptions> = {},
): SimKvraft {
  return new SimKvraft({ seed, nodes, node: { bugs: bug ? [bug] : [] }, ...options });
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

export async function ackBeforeCommit(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, bugOn ? 'ack-before-commit' : undefined);
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

export async function staleRead(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, bugOn ? 'stale-read' : undefined);
  sim.startAll();
  const old = await sim.waitLeader();
  must((await sim.write(old.id, 'x', 1)).type === 'ok', 'a write before the fault was acknowledged');
  sim.isolate(old.id);
  const next = await sim.waitLeader(
    sim.nodes.filter((n) => n !== old.id),
    5000,
    old.term,
  );
  must((await sim.write(next.id, 'x', 2)).type === 'ok', 'a write before the fault was acknowledged');
  return sim.read(old.id, 'x', 1000);
}

export async function voteWithoutLogCheck(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, bugOn ? 'vote-without-log-check' : undefined);
  sim.startAll();
  const leader = await sim.waitLeader();
  const stale = sim.nodes.find((n) => n !== leader.id)!;
  sim.isolate(stale);
  must((await sim.write(leader.id, 'x', 1)).type === 'ok', 'a write before the fault was acknowledged');
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

export async function lazyVote(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, bugOn ? 'lazy-vote' : undefined);
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
  must(first.id === 'n1', 'n1 leads first');
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
  must(term === first.term + 1, 'n3 voted in the next term');
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

export async function snapshotUncommittedConfig(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 5, undefined);
  const bugs: KvraftBug[] = bugOn ? ['snapshot-uncommitted-config'] : [];
  sim.startAll(
    { bugs, snapshotEvery: 1000, electionMs: SLOW },
    {
      n1: { bugs, snapshotEvery: 1000, electionMs: FAST },
      n3: { bugs, snapshotEvery: 8, electionMs: NEVER },
    },
  );
  const first = await sim.waitLeader();
  must(first.id === 'n1', 'n1 leads first');
  sim.isolate('n3');
  for (let i = 0; i < 12; i++)
    must((await sim.write('n1', `k${i}`, i)).type === 'ok', 'a write before the fault was acknowledged');
  const majority = ['n2', 'n4', 'n5'];
  sim.isolate('n1', majority);
  const change = sim.requestLater('n1', { op: 'remove-member', node: 'n5' }, 3000);
  const appended = await sim.world.runUntil('n1 to append the configuration', () => {
    const s = sim.statusNow('n1');
    return s && s.members.length === 4 ? s : undefined;
  });
  must(appended.lastIndex === appended.commit + 1, 'the configuration is appended, not committed');
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

export async function splitTxn(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, bugOn ? 'split-txn' : undefined);
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
export async function rejoinedRestart(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, bugOn ? 'rejoined-restart-assert' : undefined);
  const bugs: KvraftBug[] = bugOn ? ['rejoined-restart-assert'] : [];
  sim.startAll({ bugs, electionMs: SLOW }, { n1: { bugs, electionMs: FAST } });
  await sim.waitLeader();
  must(await sim.changeMember('remove-member', 'n3'), 'n3 removed');
  sim.kill('n3');
  sim.world.wipeDisk('n3');
  sim.start('n3', { bugs, join: true });
  must(await sim.changeMember('add-member', 'n3'), 'n3 added back');
  await sim.world.runUntil('n3 to learn a configuration with itself', () =>
    sim.statusNow('n3')?.members.includes('n3') ? true : undefined,
  );
  sim.kill('n3');
  sim.start('n3', { bugs, join: true });
  await sim.world.run(2000);
  return { exit: sim.exitOf('n3'), output: sim.output('n3') };
}

/**
 * A disk switch (`ack-before-fsync` by default, or `rename-without-dir-fsync`) under each storage
 * contract: writes acknowledged, then the power fails on every node (before ack-before-fsync's
 * deferred fsync), and the cluster starts again. Returns the values read back.
 */
export async function powerLossAfterAcks(
  contract: StorageContract,
  bugOn: boolean,
  seed = 3,
  bug: 'ack-before-fsync' | 'rename-without-dir-fsync' = 'ack-before-fsync',
) {
  const sim = new SimKvraft({ seed, nodes: 3, contract, node: { bugs: bugOn ? [bug] : [] } });
  sim.startAll();
  const leader = await sim.waitLeader();
  const keys = ['a', 'b', 'c', 'd'];
  for (const [i, key] of keys.entries())
    must(
      (await sim.write(leader.id, key, i + 1)).type === 'ok',
      'a write before the power loss was acknowledged',
    );
  for (const node of sim.nodes) sim.world.powerLoss(node);
  sim.startAll();
  const next = await sim.waitLeader();
  const values = [];
  for (const key of keys) {
    const r = await sim.read(next.id, key);
    values.push(r.type === 'ok' ? r.value : r.type);
  }
  return { values, tornTails: sim.events().filter((e) => e.type === 'log-torn-tail').length };
}

// ---- deep switches: each needs several faults in order, or one inside a narrow window ----------

/** Nodes whose output shows the assertion on truncating a committed entry. */
function crashedOnCommitted(sim: SimKvraft): string[] {
  return sim.nodes.filter((n) => sim.output(n).includes('ASSERTION FAILED: truncating committed'));
}

/**
 * vote-reset-same-term: n1 and n3 campaign in term 1, cut off from each other; n2 votes for n1,
 * and n1 is cut off from n2 as soon as its first message as leader reached n2 (before n2 holds an
 * entry of term 1); n3's vote request, slowed, reaches n2 after that. With the switch n2 votes
 * again: two leaders in term 1.
 */
export async function voteResetSameTerm(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, undefined);
  const bugs: KvraftBug[] = bugOn ? ['vote-reset-same-term'] : [];
  sim.isolate('n1', ['n3']);
  sim.startAll(
    {},
    {
      n1: { bugs, electionMs: [150, 151] },
      n2: { bugs, electionMs: NEVER },
      n3: { bugs, electionMs: [160, 161] },
    },
  );
  await sim.world.run(100);
  sim.delay(150, [['n3', 'n2']]);
  const first = await sim.waitLeader(['n1'], 2000);
  must(first.term === 1, 'n1 leads term 1');
  await sim.world.runUntil("n1's first message as leader to reach n2", () =>
    sim
      .events('n2')
      .find((e) => e.type === 'recv' && e.attrs?.peer === 'n1' && e.attrs.kind !== 'request-vote'),
  );
  sim.isolate('n1', ['n2'], false);
  must(sim.statusNow('n2')!.lastIndex === 0, 'n2 holds no entry of term 1');
  await sim.world.runUntil("n3's vote request to reach n2", () =>
    sim.events('n2').find((e) => e.attrs?.candidate === 'n3' && e.attrs.term === 1),
  );
  await sim.world.run(100);
  return {
    n3Led: sim.events('n3').some((e) => e.type === 'become-leader' && e.attrs?.term === 1),
    violations: checkInvariants(asEvents(sim)),
  };
}

/**
 * lease-read-on-receipt: the followers' acknowledgements are slowed, so some are always on the
 * wire; the leader n1 is paused, and cut off while paused; n2 or n3 leads and overwrites x; a read
 * sent to n1 waits while it is paused; n1 resumes and processes the old acknowledgements first.
 * With the switch they renew its lease and it answers the read from its state: x's old value.
 */
export async function leaseReadOnReceipt(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, undefined);
  const bugs: KvraftBug[] = bugOn ? ['lease-read-on-receipt'] : [];
  sim.startAll({ bugs, electionMs: SLOW }, { n1: { bugs, electionMs: FAST } });
  const old = await sim.waitLeader();
  must(old.id === 'n1', 'n1 leads first');
  must((await sim.write('n1', 'x', 1)).type === 'ok', 'a write before the fault was acknowledged');
  sim.delay(60, [
    ['n2', 'n1'],
    ['n3', 'n1'],
  ]);
  await sim.world.run(200);
  sim.world.pause('n1');
  await sim.world.run(70);
  sim.isolate('n1');
  const next = await sim.waitLeader(['n2', 'n3'], 5000, old.term);
  must((await sim.write(next.id, 'x', 2)).type === 'ok', 'the new leader took a write');
  const client = sim.clientOf('n1', 3000);
  const read = client.read('x');
  await sim.world.run(10);
  sim.world.resume('n1');
  const result = await sim.world.settle(read);
  await client.close();
  return result;
}

/**
 * read-index-before-term-commit: n3 falls behind (cut off from the leader n1); n1 commits x=2 with
 * n2 and is killed as soon as it acknowledged it, before its next heartbeat tells n2 the commit;
 * n2 leads with slow links to n3 and is read at once. With the switch its read index is its old
 * commit index and it answers x=1.
 */
export async function readIndexBeforeTermCommit(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, undefined);
  const bugs: KvraftBug[] = bugOn ? ['read-index-before-term-commit'] : [];
  sim.startAll(
    {},
    {
      n1: { bugs, electionMs: FAST },
      n2: { bugs, electionMs: [400, 450] },
      n3: { bugs, electionMs: NEVER },
    },
  );
  const old = await sim.waitLeader();
  must(old.id === 'n1', 'n1 leads first');
  must((await sim.write('n1', 'x', 1)).type === 'ok', 'a write before the fault was acknowledged');
  sim.isolate('n3', ['n1']);
  must((await sim.write('n1', 'x', 2)).type === 'ok', 'the write the new leader must not lose');
  sim.kill('n1');
  const n2 = sim.statusNow('n2')!;
  must(n2.commit < n2.lastIndex, 'n2 holds x=2 but has not learned it committed');
  sim.delay(50, [
    ['n2', 'n3'],
    ['n3', 'n2'],
  ]);
  await sim.waitLeader(['n2'], 5000, old.term);
  return sim.read('n2', 'x', 1000);
}

/**
 * learner-vote-counted (4 nodes): n4, cut off, misses its removal and is added back as a learner
 * it never hears of; n3 is then cut off from the other voters but not from n4, and campaigns. With
 * the switch n4's vote makes n3 leader; meanwhile n1 commits x=1 with n2; healed, n3's entries
 * overwrite it (the followers' assertion) or it is lost.
 */
export async function learnerVoteCounted(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 4, undefined);
  const bugs: KvraftBug[] = bugOn ? ['learner-vote-counted'] : [];
  sim.startAll(
    { bugs, electionMs: SLOW },
    { n1: { bugs, electionMs: FAST }, n3: { bugs, electionMs: [400, 450] }, n4: { bugs, electionMs: NEVER } },
  );
  const leader = await sim.waitLeader();
  must(leader.id === 'n1', 'n1 leads first');
  sim.isolate('n4');
  must(await sim.changeMember('remove-member', 'n4'), 'n4 removed');
  must(await sim.changeMember('add-member', 'n4'), 'n4 added back as a learner');
  await sim.world.runUntil('n3 to know n4 is a learner', () =>
    sim.statusNow('n3')?.learners.includes('n4') ? true : undefined,
  );
  sim.heal();
  sim.isolate('n4', ['n1', 'n2']);
  sim.isolate('n3', ['n1', 'n2']);
  await sim.world.run(1500);
  must((await sim.write('n1', 'x', 1)).type === 'ok', 'n1 still commits with n2');
  const n3Led = sim.statusNow('n3')?.role === 'leader';
  sim.heal();
  await sim.world.run(2000);
  const live = sim.nodes.filter((n) => sim.exitOf(n) === undefined && n !== 'n4');
  const current = await sim.waitLeader(live);
  return { n3Led, crashed: crashedOnCommitted(sim), readBack: await sim.read(current.id, 'x', 1000) };
}

/**
 * stale-vote-reply-counted: n1 campaigns in term 1, cut off from n3; n2 grants, but its reply is
 * slowed by a second, and n1's later requests no longer reach n2. n3 leads term 2 with n2 and
 * commits x=1. The old grant reaches n1, a candidate in a later term: with the switch it counts,
 * n1 leads with an empty log, and once healed overwrites the committed entries.
 */
export async function staleVoteReplyCounted(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, undefined);
  const bugs: KvraftBug[] = bugOn ? ['stale-vote-reply-counted'] : [];
  sim.isolate('n1', ['n3']);
  sim.startAll(
    {},
    {
      n1: { bugs, electionMs: [150, 151] },
      n2: { bugs, electionMs: NEVER },
      n3: { bugs, electionMs: [400, 401] },
    },
  );
  await sim.world.run(100);
  sim.delay(1000, [['n2', 'n1']]);
  await sim.world.runUntil('n2 to vote for n1', () =>
    sim.events('n2').find((e) => e.type === 'vote-granted' && e.attrs?.candidate === 'n1'),
  );
  sim.isolate('n1', ['n2'], false);
  const next = await sim.waitLeader(['n3'], 5000);
  must((await sim.write(next.id, 'x', 1)).type === 'ok', 'n3 commits x=1 with n2');
  await sim.world.run(1000);
  const n1Led = sim.events('n1').some((e) => e.type === 'become-leader');
  sim.heal();
  sim.delay(0, []);
  await sim.world.run(2000);
  const crashed = crashedOnCommitted(sim);
  // n1, with its empty log and a term raised every timeout, would keep disrupting elections.
  sim.kill('n1');
  const live = ['n2', 'n3'].filter((n) => sim.exitOf(n) === undefined);
  if (live.length < 2) return { n1Led, crashed, readBack: undefined };
  const current = await sim.waitLeader(live);
  return { n1Led, crashed, readBack: await sim.read(current.id, 'x', 1000) };
}

/**
 * ack-overwritten-entry: the leader n1 is cut off with a write of x in flight; n2 leads and
 * commits its own entry at that index; healed before the write times out, n1 steps down and
 * applies n2's entry there. With the switch the write is answered ok, though x was never written.
 */
export async function ackOverwrittenEntry(bugOn: boolean, seed: number) {
  const sim = cluster(seed, 3, undefined);
  const bugs: KvraftBug[] = bugOn ? ['ack-overwritten-entry'] : [];
  sim.startAll(
    {},
    {
      n1: { bugs, electionMs: FAST },
      n2: { bugs, electionMs: [300, 310] },
      n3: { bugs, electionMs: NEVER },
    },
  );
  const old = await sim.waitLeader();
  must(old.id === 'n1', 'n1 leads first');
  must((await sim.write('n1', 'x', 0)).type === 'ok', 'a write before the fault was acknowledged');
  sim.isolate('n1');
  const client = sim.clientOf('n1', 3000);
  const write = client.write('x', 1);
  const next = await sim.waitLeader(['n2'], 5000, old.term);
  await sim.world.runUntil("n2's entry to commit", () =>
    (sim.statusNow('n2')?.commit ?? 0) > next.commit ? true : undefined,
  );
  sim.heal();
  const written = await sim.world.settle(write);
  await client.close();
  return { written, readBack: await sim.read('n2', 'x', 1000) };
}
