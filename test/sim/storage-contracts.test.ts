import { describe, expect, it } from 'vitest';

import { powerLossAfterAcks } from './_helpers/kvraft-bug-scenarios.js';

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

  it('rename-without-dir-fsync shows only under C3 (names durable at a directory fsync); clean without', async () => {
    const bug = 'rename-without-dir-fsync';
    // C1 and C2 keep a name once renamed or fsynced, as the FUSE layer does: nothing is lost.
    for (const contract of ['C1', 'C2'] as const)
      expect((await powerLossAfterAcks(contract, true, 3, bug)).values).toEqual([1, 2, 3, 4]);
    // C3: no directory was ever fsynced, so every node comes back without its log or its vote.
    expect((await powerLossAfterAcks('C3', true, 3, bug)).values).toEqual([null, null, null, null]);
    for (const seed of [3, 4, 5])
      expect((await powerLossAfterAcks('C3', false, seed, bug)).values).toEqual([1, 2, 3, 4]);
  });
});
