import { describe, expect, it } from 'vitest';

import type { StorageContract } from '../../src/sim/disk.js';
import { SimKvraft } from '../../src/sim/kvraft.js';

/**
 * ack-before-fsync under each storage contract: writes acknowledged, then the power fails on every
 * node before the deferred fsync, and the cluster starts again. Returns the values read back.
 */
async function powerLossAfterAcks(contract: StorageContract, bugOn: boolean, seed = 3) {
  const sim = new SimKvraft({ seed, nodes: 3, contract, node: { bugs: bugOn ? ['ack-before-fsync'] : [] } });
  sim.startAll();
  const leader = await sim.waitLeader();
  const keys = ['a', 'b', 'c', 'd'];
  for (const [i, key] of keys.entries())
    expect(await sim.write(leader.id, key, i + 1)).toEqual({ type: 'ok' });
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

describe('storage contracts in the simulated world', () => {
  it('C1 (a write durable at once) hides ack-before-fsync: the acknowledged writes survive', async () => {
    expect((await powerLossAfterAcks('C1', true)).values).toEqual([1, 2, 3, 4]);
  });

  it('C2 (durable at fsync) shows it: acknowledged writes are gone after the power loss', async () => {
    expect((await powerLossAfterAcks('C2', true)).values).toEqual([null, null, null, null]);
  });

  it('C3 (unsynced writes torn or lost) shows it too', async () => {
    const lost = [];
    for (const seed of [3, 4, 5]) {
      const { values } = await powerLossAfterAcks('C3', true, seed);
      lost.push(values.filter((v) => v === null).length);
    }
    expect(lost.some((n) => n > 0)).toBe(true);
  });

  it('without the switch every contract keeps every acknowledged write', async () => {
    for (const contract of ['C1', 'C2', 'C3'] as const) {
      expect((await powerLossAfterAcks(contract, false)).values).toEqual([1, 2, 3, 4]);
    }
  });
});
