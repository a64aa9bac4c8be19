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
});
