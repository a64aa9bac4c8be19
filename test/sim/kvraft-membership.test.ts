import { describe, expect, it } from 'vitest';

import { SimKvraft } from '../../src/sim/kvraft.js';

/**
 * Two removals, each uncommitted on the side of a partition: n1, leader, removes itself while cut
 * off (its log holds {n2, n3}); n2, elected by n2 and n3, removes itself in turn (theirs hold
 * {n1, n3}), and dies before that commits. Then every link heals. A 10-minute simulated campaign (`--bug lease-read-on-receipt`,
 * seed 1) ended this way with no leader for 45 s: n3 needs n1's vote, and n1 refused every vote as
 * outside its own (uncommitted) configuration.
 */
async function crossedRemovals(seed: number) {
  const sim = new SimKvraft({ seed, nodes: 3 });
  sim.startAll(
    {},
    { n1: { electionMs: [150, 151] }, n2: { electionMs: [300, 301] }, n3: { electionMs: [500, 501] } },
  );
  const first = await sim.waitLeader(['n1'], 2000);
  expect(first.term).toBe(1);
  expect(await sim.write('n1', 'x', 1)).toEqual({ type: 'ok' });
  sim.isolate('n1');
  const removeN1 = sim.requestLater('n1', { op: 'remove-member', node: 'n1' }, 1000);
  const second = await sim.waitLeader(['n2'], 5000, first.term);
  expect(await sim.write('n2', 'x', 2)).toEqual({ type: 'ok' });
  const removeN2 = sim.requestLater('n2', { op: 'remove-member', node: 'n2' }, 1000);
  await sim.world.run(1500);
  await Promise.all([removeN1, removeN2]);
  expect(sim.statusNow('n1')?.members).toEqual(['n2', 'n3']);
  expect(sim.statusNow('n3')?.members).toEqual(['n1', 'n3']);
  // n2 dies before its removal commits (it needs n1); every link heals; n1 and n2 come back with
  // the default election timeouts (their pinned ones had only ordered the elections above).
  sim.kill('n2');
  sim.kill('n1');
  sim.heal();
  sim.start('n1', {});
  await sim.world.run(2000);
  sim.start('n2', {});
  const healedTerm = Math.max(...sim.nodes.map((n) => sim.statusNow(n)?.term ?? 0));
  const after = await sim.waitLeader(sim.nodes, 20_000, healedTerm).then(
    (s) => s,
    () => undefined,
  );
  return { second, after, sim };
}

describe('kvraft membership in the simulated world', () => {
  it('a node whose own removal is not committed still votes: crossed removals across a partition elect a leader once healed', async () => {
    for (const seed of [1, 2, 3]) {
      const { after, sim } = await crossedRemovals(seed);
      expect(after, `seed ${seed}: a leader within 20 s of the heal`).toBeDefined();
      // n1's uncommitted removal gave way: the cluster agrees on one configuration and serves.
      expect(await sim.write(after!.id, 'x', 3)).toEqual({ type: 'ok' });
      expect(sim.events('n1').some((e) => e.type === 'vote-granted')).toBe(true);
    }
  });
});
