import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { realWorkProbe } from '../../src/sim/real-work.js';
import { WorldClock } from '../../src/sim/world-clock.js';
import { World } from '../../src/sim/world.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A world kept busy by a process ticking every ms (as nodes' timers keep a real world busy). */
function busyWorld(): World {
  const world = new World({ seed: 1 });
  world.start('n1', (p) => {
    p.env.setInterval(() => undefined, 1);
  });
  return world;
}

describe('World.drive: the harness on virtual time', () => {
  it('holds virtual time while the harness awaits real work (file writes), and lets it pass on its sleeps', async () => {
    const world = busyWorld();
    const clock = new WorldClock(world);
    const dir = mkdtempSync(join(tmpdir(), 'mallory-drive-'));
    dirs.push(dir);
    const harness = async (): Promise<number[]> => {
      await clock.sleep(100);
      const before = world.nowMs;
      for (let i = 0; i < 20; i++) await writeFile(join(dir, `f${i}`), 'x'.repeat(100_000));
      const during = world.nowMs - before;
      await clock.sleep(50);
      return [before, during, world.nowMs];
    };
    const [before, during, after] = await world.drive(harness(), realWorkProbe());
    expect(Math.floor(before)).toBe(100);
    expect(during).toBe(0);
    expect(Math.floor(after)).toBe(150);
  });

  it('without the hold, the same writes let virtual time run on (what the hold prevents)', async () => {
    const world = busyWorld();
    const clock = new WorldClock(world);
    const dir = mkdtempSync(join(tmpdir(), 'mallory-drive-'));
    dirs.push(dir);
    const harness = async (): Promise<number> => {
      await clock.sleep(100);
      const before = world.nowMs;
      for (let i = 0; i < 20; i++) await writeFile(join(dir, `f${i}`), 'x'.repeat(100_000));
      return world.nowMs - before;
    };
    expect(await world.drive(harness(), () => false)).toBeGreaterThan(0);
  });

  it('says so when the harness waits for what cannot come (no event left, no real work)', async () => {
    const world = new World({ seed: 1 });
    await expect(world.drive(new Promise<void>(() => undefined), realWorkProbe())).rejects.toThrow(
      /the harness waits with no event left/,
    );
  });
});
