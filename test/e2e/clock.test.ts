import { readdirSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Cluster } from '../../src/cluster/cluster.js';
import { sleep } from '../../src/core/clock.js';
import { Rng } from '../../src/core/random.js';
import { findLibfaketime } from '../../src/cluster/clock-preload.js';
import { NodeClocks } from '../../src/nemesis/clock.js';
import { Nemesis } from '../../src/nemesis/nemesis.js';
import { nodeWallClockMs } from '../../src/systems/kvraft/index.js';
import { type KvraftCluster, startKvraft } from './helpers.js';

const NODES = ['n1', 'n2', 'n3'];
/** How far a node's clock may sit from the offset we set: a status round trip and scheduling. */
const TOLERANCE_MS = 300;
/** How long a restarted node may take to answer (it loads its log first). */
const RESTART_MS = 10_000;

function faketimeShm(): string[] {
  return readdirSync('/dev/shm').filter((f) => f.includes('faketime'));
}

describe('clock faults against real kvraft nodes', () => {
  let kv: KvraftCluster;
  let cluster: Cluster;
  let clocks: NodeClocks;
  let nemesis: Nemesis;
  let shmBefore: string[];

  /** How far the node's wall clock is from ours, in ms. */
  async function skewMs(node: string): Promise<number> {
    const before = Date.now();
    const theirs = await nodeWallClockMs(node, cluster);
    const after = Date.now();
    if (theirs === undefined) throw new Error(`${node} did not answer`);
    return theirs - (before + after) / 2;
  }

  /** Waits until a (re)started node answers its status, for up to `timeoutMs`. */
  async function untilAnswering(node: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await nodeWallClockMs(node, cluster)) === undefined) {
      if (Date.now() > deadline) throw new Error(`${node} did not answer within ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  beforeAll(async () => {
    const lib = await findLibfaketime();
    if (lib === undefined) throw new Error('libfaketime missing: apt-get install faketime');
    shmBefore = faketimeShm();
    kv = await startKvraft(NODES, 9, undefined, lib);
    cluster = kv.cluster;
    clocks = new NodeClocks(kv.root);
    nemesis = new Nemesis(cluster, kv.net, kv.system, new Rng(9), ['clock'], { clocks });
  });

  afterAll(async () => {
    clocks.close();
    await kv.close();
  });

  it('offers the clock faults to the policies', () => {
    expect(nemesis.actionSpace().kinds).toEqual(['bump-clock', 'drift-clock', 'strobe-clock', 'reset-clock']);
  });

  it('bump-clock moves one node by the offset, also across a restart, and reset-clock brings it back', async () => {
    const outcome = await nemesis.enact(
      { f: 'bump-clock', value: { target: 'one', deltaMs: -60_000 } },
      { nodes: ['n1'] },
    );
    expect(outcome).toMatchObject({ outcome: 'ok', nodes: ['n1'] });
    expect(Math.abs((await skewMs('n1')) + 60_000)).toBeLessThan(TOLERANCE_MS);
    expect(Math.abs(await skewMs('n2'))).toBeLessThan(TOLERANCE_MS);

    await cluster.kill('n1');
    await cluster.start('n1');
    await untilAnswering('n1', RESTART_MS);
    expect(Math.abs((await skewMs('n1')) + 60_000)).toBeLessThan(TOLERANCE_MS);

    expect(await nemesis.enact({ f: 'reset-clock', value: 'all' })).toMatchObject({ nodes: ['n1'] });
    expect(Math.abs(await skewMs('n1'))).toBeLessThan(TOLERANCE_MS);
  });

  it('drift-clock makes a clock run fast until healAll', async () => {
    await nemesis.enact({ f: 'drift-clock', value: { target: 'one', rate: 2 } }, { nodes: ['n2'] });
    await sleep(1_500);
    expect(Math.abs((await skewMs('n2')) - 1_500)).toBeLessThan(TOLERANCE_MS);
    expect(await nemesis.healAll()).toEqual([]);
    expect(Math.abs(await skewMs('n2'))).toBeLessThan(TOLERANCE_MS);
  });

  it('strobe-clock flips a clock between two offsets until healAll', async () => {
    await nemesis.enact(
      { f: 'strobe-clock', value: { target: 'one', deltaMs: 10_000, periodMs: 300 } },
      { nodes: ['n3'] },
    );
    const samples: number[] = [];
    for (let i = 0; i < 20; i++) {
      samples.push(await skewMs('n3'));
      await sleep(70);
    }
    expect(samples.some((s) => Math.abs(s - 10_000) < TOLERANCE_MS)).toBe(true);
    expect(samples.some((s) => Math.abs(s) < TOLERANCE_MS)).toBe(true);
    expect(samples.every((s) => Math.abs(s - 10_000) < TOLERANCE_MS || Math.abs(s) < TOLERANCE_MS)).toBe(
      true,
    );
    await nemesis.healAll();
    await sleep(200);
    expect(Math.abs(await skewMs('n3'))).toBeLessThan(TOLERANCE_MS);
  });

  it('leaves no libfaketime shared memory behind a killed node', async () => {
    await cluster.kill('n3');
    await cluster.start('n3');
    // start() returns once the process is spawned; libfaketime makes its files when it is loaded.
    // They are named by the node's PID: other runs on the host have their own.
    const pids = NODES.map((n) => cluster.pidOf(n));
    expect(pids.every((pid) => pid !== undefined)).toBe(true);
    const ours = (): string[] =>
      faketimeShm().filter((f) => pids.some((pid) => f.endsWith(`_${pid}`)) && !shmBefore.includes(f));
    for (let i = 0; i < 100 && ours().length < 2 * NODES.length; i++) await sleep(50);
    expect(ours()).toHaveLength(2 * NODES.length);
    await cluster.close();
    expect(ours()).toEqual([]);
  });
});
