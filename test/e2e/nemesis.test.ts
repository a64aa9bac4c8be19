import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Cluster, NodeExit } from '../../src/cluster/cluster.js';
import { sleep } from '../../src/core/clock.js';
import { Rng } from '../../src/core/random.js';
import { Nemesis } from '../../src/nemesis/nemesis.js';
import type { SystemAdapter } from '../../src/systems/system.js';
import { type KvraftCluster, startKvraft } from './helpers.js';

const NODES = ['n1', 'n2', 'n3'];

/** Polls until `f` gives a defined value. */
async function eventually<T>(f: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

describe('nemesis against real kvraft nodes', () => {
  let kv: KvraftCluster;
  let system: SystemAdapter;
  let cluster: Cluster;
  let nemesis: Nemesis;
  const exits: NodeExit[] = [];

  beforeAll(async () => {
    kv = await startKvraft(NODES, 5, (e) => exits.push(e));
    ({ system, cluster } = kv);
    nemesis = new Nemesis(cluster, kv.net, system, new Rng(5), [
      'partition',
      'kill',
      'pause',
      'packet',
      'member',
    ]);
  });

  afterAll(async () => {
    await kv.close();
  });

  const leader = (): Promise<string | undefined> => system.leadership!.leader(cluster);

  it('offers only what the system supports, with Jepsen names', () => {
    const space = nemesis.actionSpace();
    expect(space.kinds).toEqual(
      expect.arrayContaining([
        'start-partition',
        'stop-partition',
        'kill',
        'start',
        'pause',
        'resume',
        'start-packet',
        'member-remove',
        'member-add',
      ]),
    );
    expect(space.valuesOf('kill')).toContain('leader');
    expect(space.valuesOf('start-partition')).toEqual(
      expect.arrayContaining(['halves', 'isolate', 'bridge', 'leader']),
    );
  });

  it('kill leader: the leader process dies, another node takes over; start brings it back', async () => {
    const old = await eventually(leader, 10_000);
    const out = await nemesis.enact({ f: 'kill', value: 'leader' });
    expect(out).toMatchObject({ outcome: 'ok', nodes: [old] });
    expect(cluster.statusOf(old)).toBe('killed');
    const next = await eventually(async () => {
      const l = await leader();
      return l !== undefined && l !== old ? l : undefined;
    }, 15_000);
    expect(next).not.toBe(old);
    const start = await nemesis.enact({ f: 'start', value: 'all' });
    expect(start.nodes).toEqual([old]);
    expect(cluster.statusOf(old)).toBe('running');
    expect(await cluster.waitReady(15_000)).toBe(true);
    expect(exits.filter((e) => !e.expected)).toEqual([]);
  });

  it('isolating the leader makes the majority elect a new one; healing restores a single cluster', async () => {
    const old = await eventually(leader, 10_000);
    const out = await nemesis.enact({ f: 'start-partition', value: 'leader' });
    expect(out.outcome).toBe('ok');
    expect(out.links).toEqual(expect.arrayContaining([[old, NODES.find((n) => n !== old)]]));
    // the isolated node still answers clients, but the majority's leader has the higher term
    const fresh = await eventually(async () => {
      const l = await leader();
      return l !== undefined && l !== old ? l : undefined;
    }, 15_000);
    expect(fresh).not.toBe(old);
    await nemesis.enact({ f: 'stop-partition', value: null });
    expect(await cluster.waitReady(15_000)).toBe(true);
  });

  it('pause freezes a node (SIGSTOP) and resume thaws it', async () => {
    const out = await nemesis.enact({ f: 'pause', value: ['n2'] });
    expect(out.nodes).toEqual(['n2']);
    expect(cluster.statusOf('n2')).toBe('paused');
    const client = system.client('n2', cluster, 300);
    const r = await client.read('x');
    await client.close();
    expect(r.type).not.toBe('ok');
    await nemesis.enact({ f: 'resume', value: 'all' });
    expect(cluster.statusOf('n2')).toBe('running');
  });

  it('member-remove takes a node out of the configuration; member-add brings it back with a fresh data dir', async () => {
    const out = await nemesis.enact({ f: 'member-remove', value: 'one' });
    expect(out.outcome).toBe('ok');
    const removed = out.nodes[0];
    expect(cluster.members).not.toContain(removed);
    expect(cluster.statusOf(removed)).toBe('removed');
    // a second removal would leave fewer than 2 members: skipped
    expect((await nemesis.enact({ f: 'member-remove', value: 'one' })).outcome).toBe('skipped');
    expect(await cluster.waitReady(15_000)).toBe(true);
    const add = await nemesis.enact({ f: 'member-add', value: 'one' });
    expect(add).toMatchObject({ outcome: 'ok', nodes: [removed] });
    expect(cluster.members).toContain(removed);
    expect(await cluster.waitReady(15_000)).toBe(true);
  });

  it('healAll undoes a pile of faults and the cluster serves again', async () => {
    await nemesis.enact({ f: 'kill', value: ['n1'] });
    await nemesis.enact({ f: 'pause', value: ['n2'] });
    await nemesis.enact({ f: 'start-packet', value: { target: 'all', delayMs: 100 } });
    expect(await nemesis.healAll()).toEqual([]);
    expect(cluster.nodesIn('running')).toEqual(NODES);
    expect(await cluster.waitReady(20_000)).toBe(true);
    expect(exits.filter((e) => !e.expected)).toEqual([]);
  });

  it('healAll reconciles with the system: a member removed behind its back is stopped, wiped and added back', async () => {
    expect(await cluster.waitReady(20_000)).toBe(true);
    const l = await eventually(leader, 10_000);
    const victim = NODES.find((n) => n !== l)!;
    // As when a member-remove call fails after the change was appended: it commits anyway.
    await system.membership!.remove(victim, cluster);
    expect(await system.membership!.configuration!(cluster)).not.toContain(victim);
    expect(cluster.isMember(victim)).toBe(true);
    expect(await nemesis.healAll()).toEqual([]);
    expect(await system.membership!.configuration!(cluster)).toContain(victim);
    expect(cluster.isMember(victim)).toBe(true);
    expect(cluster.nodesIn('running')).toEqual(NODES);
    expect(await cluster.waitReady(20_000)).toBe(true);
    expect(exits.filter((e) => !e.expected)).toEqual([]);
  });

  it('healAll starts a removed node that the system counts as a member again (an add whose call failed but took effect)', async () => {
    expect(await cluster.waitReady(20_000)).toBe(true);
    const out = await nemesis.enact({ f: 'member-remove', value: 'one' });
    expect(out.outcome).toBe('ok');
    const victim = out.nodes[0];
    expect(cluster.statusOf(victim)).toBe('removed');
    // The add commits (2 of 3 are up) but the node was never started.
    await system.membership!.add(victim, cluster);
    // The committed configuration is undefined for a moment when the leader has not yet committed
    // an entry of its term (or no node answers as leader): poll until a leader says.
    expect(await eventually(() => system.membership!.configuration!(cluster), 10_000)).toContain(victim);
    expect(await nemesis.healAll()).toEqual([]);
    expect(cluster.isMember(victim)).toBe(true);
    expect(cluster.nodesIn('running')).toEqual(NODES);
    expect(await cluster.waitReady(20_000)).toBe(true);
    expect(exits.filter((e) => !e.expected)).toEqual([]);
  });

  it('restartFresh (the hard reset) wipes every node and brings up a fresh cluster of all members', async () => {
    expect(await cluster.waitReady(20_000)).toBe(true);
    const l = await eventually(leader, 10_000);
    const client = system.client(l, cluster, 2000);
    expect((await client.write('fresh', 7)).type).toBe('ok');
    await client.close();
    await nemesis.enact({ f: 'member-remove', value: 'one' });
    await cluster.restartFresh();
    expect(cluster.members).toEqual(NODES);
    expect(cluster.nodesIn('running')).toEqual(NODES);
    expect(await cluster.waitReady(20_000)).toBe(true);
    const after = system.client(await eventually(leader, 10_000), cluster, 2000);
    expect(await after.read('fresh')).toMatchObject({ type: 'ok', value: null });
    await after.close();
    expect(exits.filter((e) => !e.expected)).toEqual([]);
  });
});
