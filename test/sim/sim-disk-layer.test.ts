import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { simCluster, simDevices, simWorld } from '../../src/campaign/_internals/sim-parts.js';
import { RunConfigSchema } from '../../src/campaign/config.js';
import { DiskFamily } from '../../src/nemesis/families/disk.js';
import type { FamilyContext } from '../../src/nemesis/families/family.js';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A simulated run's world, cluster and devices, as `assembleRun` builds them for `--sim`. */
function simRun(contract: 'C1' | 'C2' | 'C3' = 'C2') {
  const runDir = mkdtempSync(join(tmpdir(), 'mallory-sim-devices-'));
  dirs.push(runDir);
  const config = RunConfigSchema.parse({ system: 'kvraft', sim: { contract } });
  const world = simWorld(config, { seed: 3, nodes: 3, bugs: [] });
  const { cluster } = simCluster(world, runDir, []);
  return { world, cluster, ...simDevices(world, cluster, 'sector') };
}

describe("the clock and disk families' devices in the simulated world", () => {
  it("fsync-error makes the node's fsyncs fail: kvraft stops, and its exit is put down to the fault", async () => {
    const { world, cluster, disks } = simRun();
    await cluster.startAll();
    const leader = await world.kv.world.settle(world.kv.waitLeader());
    await disks.fsyncError([leader.id]);
    const written = await world.kv.world.settle(world.kv.write(leader.id, 'x', 1, 1000));
    expect(written.type).not.toBe('ok');
    expect(world.kv.exitOf(leader.id)).toEqual({ code: 1 });
    expect(cluster.statusOf(leader.id)).toBe('exited');
    expect(disks.exitCause(leader.id, world.clock.monoNs())).toBe('fsync-error');
    const healed = await disks.heal();
    expect(healed.errored).toEqual([leader.id]);
    expect(world.kv.world.disk(leader.id).faults).toEqual([]);
  });

  it('lose-unfsynced crashes the disk under the contract; slow-disk is not simulated and not offered', async () => {
    const { world, cluster, disks } = simRun('C2');
    await cluster.startAll();
    await world.kv.world.settle(world.kv.waitLeader());
    await cluster.kill('n1');
    await disks.loseUnfsynced(['n1']);
    expect(disks.faulted).toEqual(['n1']);
    await expect(disks.slow(['n2'], 50)).rejects.toThrow(/is not simulated/);
    const family = new DiskFamily();
    const values = family.values({ ctx: { disks } as unknown as FamilyContext, targets: ['one'] });
    expect(values['slow-disk']).toEqual([]);
    expect(values['torn-write']).toEqual(['one']);
  });

  it("clock faults move a node's wall clock, drift ticking on the world's clock, no real timer", async () => {
    const { world, clocks } = simRun();
    const interval = vi.spyOn(globalThis, 'setInterval');
    const timeout = vi.spyOn(globalThis, 'setTimeout');
    clocks.bump(['n1'], 5_000);
    expect(world.kv.world.clockOffsetMs('n1')).toBe(5_000);
    clocks.drift(['n2'], 2);
    await world.kv.world.run(1_000);
    // Twice as fast for a second: a second ahead, as the ticker last wrote it (every 50 ms).
    expect(world.kv.world.clockOffsetMs('n2')).toBeGreaterThanOrEqual(950);
    expect(world.kv.world.clockOffsetMs('n2')).toBeLessThanOrEqual(1_000);
    clocks.close();
    expect(world.kv.world.clockOffsetMs('n1')).toBe(0);
    expect(world.kv.world.clockOffsetMs('n2')).toBe(0);
    expect(interval).not.toHaveBeenCalled();
    expect(timeout).not.toHaveBeenCalled();
  });
});
