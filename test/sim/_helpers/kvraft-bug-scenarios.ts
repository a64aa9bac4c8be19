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
 * ack-before-fsync under each storage contract: writes acknowledged, then the power fails on every
 * node before the deferred fsync, and the cluster starts again. Returns the values read back.
 */
export async function powerLossAfterAcks(contract: StorageContract, bugOn: boolean, seed = 3) {
  const sim = new SimKvraft({ seed, nodes: 3, contract, node: { bugs: bugOn ? ['ack-before-fsync'] : [] } });
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
