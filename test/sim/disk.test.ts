import { describe, expect, it } from 'vitest';

import type { StorageContract } from '../../src/sim/disk.js';
import type { DiskFs } from '../../src/systems/kvraft/seams.js';
import { SimKvraft } from '../../src/sim/kvraft.js';
import { World } from '../../src/sim/world.js';

/** A process on host `h` that runs `act` on its file calls; returns the world and the disk. */
async function withFs(contract: StorageContract, act: (fs: DiskFs) => void, seed = 1) {
  const world = new World({ seed, contract, bootDelayMs: [0, 0] });
  world.start('h', (p) => {
    act(p.io.fs);
  });
  await world.run(1);
  return { world, disk: world.disk('h') };
}

const text = (b: Buffer | undefined): string | undefined => b?.toString('utf8');

describe('the simulated disk', () => {
  it('a kill keeps the page cache; a power loss keeps what the contract promises', async () => {
    const write = (fs: DiskFs): void => {
      fs.mkdirp('/d');
      const fd = fs.open('/d/f', 'a');
      fs.write(fd, 'synced\n');
      fs.fsync(fd);
      fs.fsyncDir('/d');
      fs.write(fd, 'unsynced\n');
    };
    for (const contract of ['C1', 'C2'] as const) {
      const { world, disk } = await withFs(contract, write);
      world.kill('h');
      expect(text(disk.contents('/d/f'))).toBe('synced\nunsynced\n');
      world.powerLoss('h');
      expect(text(disk.contents('/d/f'))).toBe(contract === 'C1' ? 'synced\nunsynced\n' : 'synced\n');
    }
  });

  it('C3: a rename is durable only once its directory is fsynced (C2 makes it durable at once)', async () => {
    const replace = (dirSync: boolean) => (fs: DiskFs) => {
      fs.mkdirp('/d');
      const fd = fs.open('/d/f.tmp', 'w');
      fs.write(fd, 'new');
      fs.fsync(fd);
      fs.close(fd);
      fs.rename('/d/f.tmp', '/d/f');
      if (dirSync) fs.fsyncDir('/d');
    };
    for (const [contract, dirSync, survives] of [
      ['C2', false, true],
      ['C3', false, false],
      ['C3', true, true],
    ] as const) {
      const { world, disk } = await withFs(contract, replace(dirSync));
      world.powerLoss('h');
      expect(text(disk.contents('/d/f'))).toBe(survives ? 'new' : undefined);
    }
  });

  it('C2: a file created is gone after a power loss until it or its directory is fsynced (as the FUSE layer)', async () => {
    const create = (fs: DiskFs): void => {
      fs.mkdirp('/d');
      fs.mkdirp('/e');
      fs.write(fs.open('/d/never', 'w'), 'never synced');
      const synced = fs.open('/d/synced', 'w');
      fs.write(synced, 'kept');
      fs.fsync(synced);
      fs.write(fs.open('/e/named', 'w'), 'content never synced');
      fs.fsyncDir('/e');
      fs.write(fs.open('/e/later', 'w'), 'created after the dir fsync');
    };
    const { world, disk } = await withFs('C2', create);
    world.powerLoss('h');
    expect(text(disk.contents('/d/never'))).toBeUndefined();
    expect(text(disk.contents('/d/synced'))).toBe('kept');
    expect(text(disk.contents('/e/named'))).toBe('');
    expect(text(disk.contents('/e/later'))).toBeUndefined();
  });

  it('C3: an unsynced append persists wholly, in whole sectors, or not at all', async () => {
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const { world, disk } = await withFs(
        'C3',
        (fs) => {
          fs.mkdirp('/d');
          const fd = fs.open('/d/f', 'a');
          fs.fsyncDir('/d');
          fs.write(fd, 'x'.repeat(1024));
        },
        seed,
      );
      world.powerLoss('h');
      const after = disk.contents('/d/f')!;
      // Each sector is either all there or all zeros (a hole before a sector that persisted).
      for (let at = 0; at < after.length; at += 512) {
        const sector = after.subarray(at, at + 512).toString('latin1');
        expect(sector === 'x'.repeat(512) || sector === '\0'.repeat(512)).toBe(true);
      }
      outcomes.add(after.toString('latin1').replace(/x+/g, 'x').replace(/\0+/g, '0'));
    }
    expect([...outcomes].sort()).toEqual(['', '0x', 'x']);
  });

  it("a torn crash keeps a prefix of each file's last unsynced write: whole sectors, or inside one", async () => {
    const append = (fs: DiskFs): void => {
      fs.mkdirp('/d');
      const fd = fs.open('/d/f', 'a');
      fs.write(fd, 's'.repeat(100));
      fs.fsync(fd);
      fs.fsyncDir('/d');
      fs.write(fd, 'a'.repeat(300));
      fs.write(fd, 'b'.repeat(2000));
    };
    const kept = new Set<number>();
    for (let seed = 0; seed < 20; seed++) {
      for (const cut of ['sector', 'byte'] as const) {
        const { world, disk } = await withFs('C2', append);
        world.kill('h');
        world.crashDisk('h', { seed, cut });
        const after = text(disk.contents('/d/f'))!;
        const page = `${'s'.repeat(100)}${'a'.repeat(300)}${'b'.repeat(2000)}`;
        let b: number;
        if (cut === 'sector') {
          // Whole sectors as the page cache held them, up to a boundary strictly inside the last
          // write (the earlier unsynced write's bytes in its first sector went to disk with it), or
          // only the synced part.
          b = Math.max(0, after.length - 400);
          expect(after.length === 100 || after.length % 512 === 0).toBe(true);
          expect(after).toBe(after.length === 100 ? 's'.repeat(100) : page.slice(0, after.length));
        } else {
          // The earlier unsynced write lost (zeros), a strict prefix of the last not ending on a sector.
          b = after.length - 400;
          expect(after).toBe(`${'s'.repeat(100)}${'\0'.repeat(300)}${'b'.repeat(b)}`);
          expect(b).toBeGreaterThan(0);
          expect(after.length % 512).not.toBe(0);
        }
        expect(b).toBeLessThan(2000);
        kept.add(b);
        // The same seed cuts the same file the same way.
        const again = await withFs('C2', append);
        again.world.kill('h');
        again.world.crashDisk('h', { seed, cut });
        expect(text(again.disk.contents('/d/f'))).toBe(after);
      }
    }
    expect(kept.size).toBeGreaterThan(4);
    // C1: every completed write is durable at once, so nothing is unsynced and nothing tears.
    const { world, disk } = await withFs('C1', append);
    world.kill('h');
    world.crashDisk('h', { seed: 1, cut: 'byte' });
    expect(text(disk.contents('/d/f'))).toBe(`${'s'.repeat(100)}${'a'.repeat(300)}${'b'.repeat(2000)}`);
  });

  it('fsync errors and a full disk can be in force at once; a running process is refused a disk crash', async () => {
    const world = new World({ seed: 1, contract: 'C2', bootDelayMs: [0, 0] });
    world.setDiskFaults('h', [
      { op: 'fsync', code: 'EIO' },
      { op: 'write', code: 'ENOSPC' },
    ]);
    const codes: string[] = [];
    world.start('h', (p) => {
      const { fs } = p.io;
      fs.mkdirp('/d');
      const fd = fs.open('/d/f', 'a');
      for (const call of [
        () => {
          fs.write(fd, 'x');
        },
        () => {
          fs.fsync(fd);
        },
      ]) {
        try {
          call();
        } catch (e) {
          codes.push((e as { code: string }).code);
        }
      }
    });
    await world.run(1);
    expect(codes).toEqual(['ENOSPC', 'EIO']);
    expect(() => {
      world.crashDisk('h');
    }).toThrow(/kill it before/);
  });

  it('a disk fault fails the call with its code, and kvraft stops on it (fail-stop)', async () => {
    const sim = new SimKvraft({ seed: 1, nodes: 3 });
    sim.startAll();
    const leader = await sim.waitLeader();
    sim.world.disk(leader.id).fault = { op: 'fsync', code: 'EIO' };
    const written = await sim.write(leader.id, 'x', 1, 1000);
    expect(written.type).not.toBe('ok');
    expect(sim.exitOf(leader.id)).toEqual({ code: 1 });
    expect(sim.output(leader.id)).toContain(
      `kvraft ${leader.id}: stopping: the disk refused to fsync log.jsonl (EIO:`,
    );
    expect(sim.events(leader.id).at(-1)?.type).toBe('storage-failed');
  });
});
