import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { SimKvraft } from '../../src/sim/kvraft.js';
import { workloadDigest } from './_helpers/workload-digest.js';

const run = promisify(execFile);
const DIGEST_SCRIPT = join(import.meta.dirname, '_helpers', 'workload-digest.ts');

/** The workload's digest computed in a fresh Node process. */
async function digestInFreshProcess(seed: number): Promise<unknown> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', DIGEST_SCRIPT, `${seed}`]);
  return JSON.parse(stdout);
}

/** A 3-node cluster that elects a leader and takes writes from two clients for 5 s of virtual time. */
async function workload(seed: number): Promise<{ digest: string; sim: SimKvraft; oks: number }> {
  const sim = new SimKvraft({ seed, nodes: 3 });
  sim.startAll();
  const leader = await sim.waitLeader();
  let oks = 0;
  for (let i = 0; i < 20; i++) {
    const result = await sim.write(i % 2 === 0 ? leader.id : 'n1', `k${i % 3}`, i);
    if (result.type === 'ok') oks++;
  }
  await sim.world.run(5000);
  return { digest: sim.world.digest(), sim, oks };
}

describe('kvraft in the simulated world', () => {
  it('elects one leader and serves writes and reads in virtual time', async () => {
    const sim = new SimKvraft({ seed: 1, nodes: 3 });
    sim.startAll();
    const leader = await sim.waitLeader();
    expect(sim.nodes).toContain(leader.id);
    expect(await sim.write(leader.id, 'x', 1)).toEqual({ type: 'ok' });
    // A follower refuses with a leader hint; the client follows it.
    const follower = sim.nodes.find((n) => n !== leader.id)!;
    expect(await sim.write(follower, 'x', 2)).toEqual({ type: 'ok' });
    expect(await sim.read(follower, 'x')).toEqual({ type: 'ok', value: 2 });
    await sim.world.run(1000);
    for (const node of sim.nodes) expect(sim.statusNow(node)?.applied).toBe(leader.lastIndex + 2);
    const leaders = sim.events().filter((e) => e.type === 'become-leader');
    expect(leaders.map((e) => e.node)).toEqual([leader.id]);
    expect(sim.output(leader.id)).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z n\d become-leader term=1/m);
  });

  it('is deterministic: the same seed gives the same digest, another seed another', async () => {
    const a = await workload(42);
    const b = await workload(42);
    const c = await workload(43);
    expect(a.oks).toBe(20);
    expect(b.digest).toBe(a.digest);
    expect(b.sim.events()).toEqual(a.sim.events());
    expect(c.digest).not.toBe(a.digest);
  });

  it('is deterministic under faults: the same seed gives the same digest in fresh processes', async () => {
    const here = await workloadDigest(5);
    expect(here.ops).toBeGreaterThan(100);
    expect(here.oks).toBeGreaterThan(50);
    const [a, b] = await Promise.all([digestInFreshProcess(5), digestInFreshProcess(5)]);
    expect(a).toEqual(here);
    expect(b).toEqual(here);
    expect((await workloadDigest(6)).digest).not.toBe(here.digest);
  });
});
