import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildDiskLayer, DiskLayer } from '../../src/cluster/disk-layer.js';
import { ResourceRegistry } from '../../src/cluster/resources.js';
import { localLayout } from '../../src/cluster/runtime/local-layout.js';
import { Rng } from '../../src/core/random.js';
import { SimDisk } from '../../src/sim/disk.js';
import type { HostedProcess } from '../../src/sim/scheduler.js';
import type { DiskFs } from '../../src/systems/kvraft/seams.js';
import { nodeDiskFs } from '../../src/systems/kvraft/_internals/node-seams.js';

// The simulated disk's C2 contract is the FUSE disk layer's rule (durable at fsync, a crash drops
// what was written since; a torn crash keeps a prefix of each file's last unsynced write, cut where
// the seed and the file's path say): the two must agree, operation by operation. Random traces of file calls
// run against both, through the same `DiskFs` calls kvraft makes; after each, the process dies, the
// real disk drops (or tears) its unfsynced writes and the simulated one crashes alike; every
// name and every byte must be the same. Runs as an e2e test: it mounts.

const TRACES = 150;
const OPS_PER_TRACE = 30;
const NAMES = ['a', 'b', 's/c'] as const;
/** How each trace's crash cuts: no tear, whole sectors, inside a sector. */
const CRASHES = [undefined, 'sector', 'byte'] as const;
/** Writes up to this long: several 512-byte sectors. */
const MAX_WRITE_BYTES = 1200;

type Call =
  | { op: 'open'; name: string; flags: 'a' | 'w' }
  | { op: 'write'; name: string; text: string }
  | { op: 'fsync'; name: string }
  | { op: 'ftruncate'; name: string; length: number }
  | { op: 'close'; name: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'fsyncDir'; dir: '' | 's' };

/** A trace of calls a process could make on files `NAMES` in a dir (and its subdir `s`). */
function trace(rng: Rng): Call[] {
  const open = new Set<string>();
  const exists = new Set<string>();
  const lengths = new Map<string, number>();
  const calls: Call[] = [];
  while (calls.length < OPS_PER_TRACE) {
    const name = NAMES[rng.int(NAMES.length)];
    switch (rng.int(7)) {
      case 0:
        if (open.has(name)) break;
        calls.push({ op: 'open', name, flags: rng.chance(0.5) ? 'a' : 'w' });
        open.add(name);
        exists.add(name);
        break;
      case 1:
      case 2: {
        if (!open.has(name)) break;
        const length = 1 + rng.int(MAX_WRITE_BYTES);
        const letter = String.fromCharCode(97 + rng.int(26));
        calls.push({ op: 'write', name, text: `${letter}${rng.int(10)}`.repeat(length).slice(0, length) });
        lengths.set(name, (lengths.get(name) ?? 0) + length);
        break;
      }
      case 3:
        if (open.has(name)) calls.push({ op: 'fsync', name });
        break;
      case 4:
        if (open.has(name))
          calls.push({ op: 'ftruncate', name, length: rng.int((lengths.get(name) ?? 0) + 10) });
        break;
      case 5:
        if (open.has(name) && rng.chance(0.5)) {
          calls.push({ op: 'close', name });
          open.delete(name);
        } else if (!open.has(name) && exists.has(name)) {
          // A rename of a closed file over another closed name (or a new one).
          const to = NAMES.filter((n) => n !== name && !open.has(n))[0];
          if (to === undefined) break;
          calls.push({ op: 'rename', from: name, to });
          exists.delete(name);
          exists.add(to);
        }
        break;
      default:
        calls.push({ op: 'fsyncDir', dir: rng.chance(0.5) ? '' : 's' });
    }
  }
  return calls;
}

/** Plays the calls on `fs` in `dir`; leaves no descriptor open (the process dies after). */
function play(fs: DiskFs, dir: string, calls: readonly Call[]): void {
  const fds = new Map<string, number>();
  for (const c of calls) {
    switch (c.op) {
      case 'open':
        fds.set(c.name, fs.open(join(dir, c.name), c.flags));
        break;
      case 'write':
        fs.write(fds.get(c.name)!, c.text);
        break;
      case 'fsync':
        fs.fsync(fds.get(c.name)!);
        break;
      case 'ftruncate':
        fs.ftruncate(fds.get(c.name)!, c.length);
        break;
      case 'close':
        fs.close(fds.get(c.name)!);
        fds.delete(c.name);
        break;
      case 'rename':
        fs.rename(join(dir, c.from), join(dir, c.to));
        break;
      case 'fsyncDir':
        fs.fsyncDir(join(dir, c.dir));
    }
  }
  for (const fd of fds.values()) fs.close(fd);
}

/** Each name's bytes after the crash, or null when the name is gone. */
function image(read: (file: string) => Buffer | undefined, dir: string): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const name of NAMES) out[name] = read(join(dir, name))?.toString('latin1') ?? null;
  return out;
}

const aProcess = (): HostedProcess => ({
  host: 'h',
  alive: true,
  paused: false,
  hold: () => undefined,
  onEnd: [],
});

describe('the simulated disk (C2) and the FUSE disk layer agree on random traces of file calls', () => {
  let root: string;
  let mnt: string;
  let registry: ResourceRegistry;
  let layer: DiskLayer;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mallory-disk-vs-sim-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`disk-vs-sim-${process.pid}`, root);
    layer = new DiskLayer(localLayout(`disk-vs-sim-${process.pid}`), registry, await buildDiskLayer());
    mnt = join(root, 'n1');
    mkdirSync(mnt);
    await layer.mount('n1', mnt, root);
  });

  afterAll(async () => {
    await layer.close();
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  it(`${TRACES} traces of ${OPS_PER_TRACE} calls: the same names and bytes after each crash`, async () => {
    for (let t = 0; t < TRACES; t++) {
      const calls = trace(new Rng(t));
      const dir = join(mnt, `t${t}`);
      // The trace's dirs, durable before it starts (the simulated disk's dirs always are).
      nodeDiskFs.mkdirp(join(dir, 's'));
      nodeDiskFs.fsyncDir(dir);
      nodeDiskFs.fsyncDir(mnt);
      play(nodeDiskFs, dir, calls);
      // A third of the crashes drop what was not fsynced; the others tear each file's last
      // unsynced write too, in whole sectors or inside one (`torn-write SEED [sector|byte]`).
      const tear = CRASHES[t % CRASHES.length];
      await layer.command('n1', tear === undefined ? 'drop-unfsynced' : `torn-write ${t} ${tear}`);
      const real = image((f) => (existsSync(f) ? readFileSync(f) : undefined), dir);

      const disk = new SimDisk('C2', new Rng(t));
      const fs = disk.fsFor(aProcess());
      fs.mkdirp(join(dir, 's'));
      play(fs, dir, calls);
      disk.crash(tear === undefined ? undefined : { seed: t, cut: tear, root: mnt });
      const simulated = image((f) => disk.contents(f), dir);

      expect(
        simulated,
        `trace ${t}: ${JSON.stringify(calls.map((c) => ('text' in c ? { ...c, text: c.text.length } : c)))}`,
      ).toEqual(real);
    }
  }, 120_000);
});
