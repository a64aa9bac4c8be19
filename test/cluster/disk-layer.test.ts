import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildDiskLayer, DiskLayer } from '../../src/cluster/disk-layer.js';
import { localLayout } from '../../src/cluster/runtime/local-layout.js';
import { type CommandResult, run } from '../../src/core/exec.js';
import { mountPoints, ResourceRegistry } from '../../src/cluster/resources.js';

// The FUSE layer itself, mounted for real over a temp dir: what `drop-unfsynced` keeps and drops,
// what `torn-write` keeps of the last unsynced write, and the error modes. Runs as an e2e test: it mounts.

const SLOW_MS = 200;
const SECTOR_BYTES = 512;
const UNSYNCED_BYTES = 4096;
const TORN_SEED = 7;

/** The documented hash of a cut: FNV-1a 64 of the seed's digits, a NUL and the path. */
function cutHash(seed: number, path: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(`${seed}\0${path}`))
    h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

/** The documented cut of `torn-write SEED byte`: how many bytes of the write stay. */
function expectedCut(seed: number, path: string, len: number): number {
  if (len <= 1) return 0;
  const keep = 1 + Number(cutHash(seed, path) % BigInt(len - 1));
  return keep % SECTOR_BYTES === 0 ? keep - 1 : keep;
}

/** The documented cut of `torn-write SEED` (sector): the file offset where what stays ends. */
function expectedSectorEnd(seed: number, path: string, off: number, len: number): number {
  const first = (Math.floor(off / SECTOR_BYTES) + 1) * SECTOR_BYTES;
  if (first >= off + len) return off;
  const boundaries = Math.floor((off + len - 1 - first) / SECTOR_BYTES) + 1;
  return first + Number(cutHash(seed, path) % BigInt(boundaries)) * SECTOR_BYTES;
}

function writeFile(path: string, text: string, fsync: boolean, flags = 'w'): void {
  const fd = openSync(path, flags);
  writeSync(fd, text);
  if (fsync) fsyncSync(fd);
  closeSync(fd);
}

function fsyncDir(path: string): void {
  const fd = openSync(path, 'r');
  fsyncSync(fd);
  closeSync(fd);
}

describe('the FUSE disk layer', () => {
  let root: string;
  let mnt: string;
  let registry: ResourceRegistry;
  let layer: DiskLayer;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'mallory-disk-test-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`disk-test-${process.pid}`, root);
    layer = new DiskLayer(localLayout(`disk-test-${process.pid}`), registry, await buildDiskLayer());
    mnt = join(root, 'n1');
    mkdirSync(mnt);
    writeFileSync(join(mnt, 'before'), 'there before the mount');
    await layer.mount('n1', mnt, root);
  });

  afterAll(async () => {
    await layer.close();
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  it('mounts over the dir, its files moved to the backing dir, and is in the registry first', () => {
    expect(mountPoints()).toContain(mnt);
    expect(readFileSync(join(mnt, 'before'), 'utf8')).toBe('there before the mount');
    expect(readdirSync(`${mnt}.disk`)).toEqual(['before']);
    const lines = readFileSync(registry.file, 'utf8');
    expect(lines.indexOf(`"kind":"mount","path":"${mnt}"`)).toBeGreaterThan(0);
    expect(lines.indexOf(`"kind":"mount"`)).toBeLessThan(lines.indexOf('disk layer'));
  });

  it('keeps what was fsynced and drops what was not: appends, overwrites, truncations', async () => {
    writeFile(join(mnt, 'log'), 'one\n', true);
    writeFile(join(mnt, 'log'), 'two\n', false, 'a');
    writeFile(join(mnt, 'synced'), 'abcdef', true);
    const fd = openSync(join(mnt, 'synced'), 'r+');
    writeSync(fd, 'XY', 2);
    closeSync(fd);
    writeFile(join(mnt, 'before'), 'overwritten', false);
    writeFile(join(mnt, 'after-fsync'), 'kept', true);
    expect(readFileSync(join(mnt, 'log'), 'utf8')).toBe('one\ntwo\n');
    expect(await layer.command('n1', 'drop-unfsynced')).toBe('restored=3 removed=0');
    expect(readFileSync(join(mnt, 'log'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(mnt, 'synced'), 'utf8')).toBe('abcdef');
    expect(readFileSync(join(mnt, 'before'), 'utf8')).toBe('there before the mount');
    expect(readFileSync(join(mnt, 'after-fsync'), 'utf8')).toBe('kept');
  });

  it('removes a file created and fsynced by neither itself nor its dir; a dir fsync keeps the name only', async () => {
    writeFile(join(mnt, 'new'), 'never synced', false);
    writeFile(join(mnt, 'tmp'), 'synced, then renamed', true);
    renameSync(join(mnt, 'tmp'), join(mnt, 'renamed'));
    mkdirSync(join(mnt, 'sub'));
    writeFile(join(mnt, 'sub', 'named'), 'content never synced', false);
    fsyncDir(join(mnt, 'sub'));
    writeFile(join(mnt, 'sub', 'gone'), 'created after the dir fsync', false);
    await layer.command('n1', 'drop-unfsynced');
    expect(existsSync(join(mnt, 'new'))).toBe(false);
    expect(readFileSync(join(mnt, 'renamed'), 'utf8')).toBe('synced, then renamed');
    expect(readdirSync(join(mnt, 'sub'))).toEqual(['named']);
    expect(readFileSync(join(mnt, 'sub', 'named'), 'utf8')).toBe('');
  });

  it('torn-write byte keeps the durable part and a strict prefix of the last unsynced write, split inside a sector', async () => {
    writeFile(join(mnt, 'torn'), 'durable\n', true);
    const unsynced = Buffer.alloc(UNSYNCED_BYTES, 'abcdefghij');
    writeFile(join(mnt, 'torn'), unsynced.toString(), false, 'a');

    expect(await layer.command('n1', `torn-write ${TORN_SEED} byte`)).toMatch(
      /^restored=\d+ removed=0 torn=1$/,
    );

    const keep = expectedCut(TORN_SEED, 'torn', UNSYNCED_BYTES);
    expect(keep).toBeGreaterThan(0);
    expect(keep).toBeLessThan(UNSYNCED_BYTES);
    expect(keep % SECTOR_BYTES).not.toBe(0);
    const after = readFileSync(join(mnt, 'torn'));
    expect(after.subarray(0, 8).toString()).toBe('durable\n');
    expect(after.subarray(8)).toEqual(unsynced.subarray(0, keep));
    expect(readFileSync(join(root, 'disk.log'), 'utf8')).toContain(
      `torn-write torn: kept ${keep} of the last unsynced write's ${UNSYNCED_BYTES} bytes at offset 8 (torn inside a sector)`,
    );
  });

  it('torn-write byte drops the earlier unsynced writes (a gap reads as zeros), and the same seed cuts the same', async () => {
    const cuts: Buffer[] = [];
    for (let round = 0; round < 2; round++) {
      writeFile(join(mnt, 'gap'), 'durable\n', true);
      writeFile(join(mnt, 'gap'), 'dropped\n', false, 'a');
      writeFile(join(mnt, 'gap'), 'the last write, torn somewhere\n', false, 'a');
      writeFile(join(mnt, 'never-synced'), 'created and torn: gone all the same', false);
      await layer.command('n1', `torn-write ${TORN_SEED} byte`);
      cuts.push(readFileSync(join(mnt, 'gap')));
      expect(existsSync(join(mnt, 'never-synced'))).toBe(false);
    }
    const keep = expectedCut(TORN_SEED, 'gap', 'the last write, torn somewhere\n'.length);
    expect(cuts[0].toString()).toBe(
      `durable\n${'\0'.repeat(8)}${'the last write, torn somewhere\n'.slice(0, keep)}`,
    );
    expect(cuts[1]).toEqual(cuts[0]);
    await expect(layer.command('n1', 'torn-write -1')).rejects.toThrow(/torn-write takes a seed/);
    await expect(layer.command('n1', 'torn-write 7 bytes')).rejects.toThrow(
      /then sector \(the default\) or byte/,
    );
  });

  it('torn-write (sector, the default) keeps whole 512-byte sectors of the last unsynced write, cut as documented', async () => {
    writeFile(join(mnt, 'sectors'), 'durable\n', true);
    const unsynced = Buffer.alloc(UNSYNCED_BYTES, 'abcdefghij');
    writeFile(join(mnt, 'sectors'), unsynced.toString(), false, 'a');

    expect(await layer.command('n1', `torn-write ${TORN_SEED}`)).toMatch(/^restored=\d+ removed=0 torn=1$/);

    const end = expectedSectorEnd(TORN_SEED, 'sectors', 8, UNSYNCED_BYTES);
    expect(end % SECTOR_BYTES).toBe(0);
    expect(end).toBeGreaterThan(8);
    expect(end).toBeLessThan(8 + UNSYNCED_BYTES);
    const after = readFileSync(join(mnt, 'sectors'));
    expect(after.length).toBe(end);
    expect(after.subarray(0, 8).toString()).toBe('durable\n');
    expect(after.subarray(8)).toEqual(unsynced.subarray(0, end - 8));
    expect(readFileSync(join(root, 'disk.log'), 'utf8')).toContain(
      `torn-write sectors: kept ${end - 8} of the last unsynced write's ${UNSYNCED_BYTES} bytes at offset 8 (whole 512-byte sectors)`,
    );
  });

  it('torn-write (sector) writes a sector whole: its earlier unsynced bytes stay with it; a write within one sector stays not at all', async () => {
    const last = Buffer.alloc(1000, 'z');
    writeFile(join(mnt, 'whole'), 'durable\n', true);
    writeFile(join(mnt, 'whole'), 'earlier\n', false, 'a');
    writeFile(join(mnt, 'whole'), last.toString(), false, 'a');
    writeFile(join(mnt, 'small'), 'durable\n', true);
    writeFile(join(mnt, 'small'), 'the last write, within one sector\n', false, 'a');

    await layer.command('n1', 'torn-write 3 sector');

    // The only sector boundary inside [16, 1016) is 512: the first sector goes whole, as the page cache held it.
    expect(expectedSectorEnd(3, 'whole', 16, last.length)).toBe(SECTOR_BYTES);
    expect(readFileSync(join(mnt, 'whole'))).toEqual(
      Buffer.concat([Buffer.from('durable\nearlier\n'), last.subarray(0, SECTOR_BYTES - 16)]),
    );
    expect(readFileSync(join(mnt, 'small'), 'utf8')).toBe('durable\n');
  });

  it('fsync-error on makes fsync fail with EIO and keeps the write unfsynced; off heals it', async () => {
    await layer.command('n1', 'fsync-error on');
    const fd = openSync(join(mnt, 'log'), 'a');
    writeSync(fd, 'three\n');
    expect(() => {
      fsyncSync(fd);
    }).toThrow(expect.objectContaining({ code: 'EIO' }) as Error);
    closeSync(fd);
    await layer.command('n1', 'fsync-error off');
    await layer.command('n1', 'drop-unfsynced');
    expect(readFileSync(join(mnt, 'log'), 'utf8')).toBe('one\n');
  });

  it('full on makes writes fail with ENOSPC', async () => {
    await layer.command('n1', 'full on');
    expect(() => {
      writeFile(join(mnt, 'log'), 'more\n', false, 'a');
    }).toThrow(expect.objectContaining({ code: 'ENOSPC' }) as Error);
    await layer.command('n1', 'full off');
    writeFile(join(mnt, 'log'), 'more\n', true, 'a');
    expect(readFileSync(join(mnt, 'log'), 'utf8')).toBe('one\nmore\n');
  });

  it('slow MS delays every read and write', async () => {
    const fast = Date.now();
    writeFile(join(mnt, 'timed'), 'x', false);
    const fastMs = Date.now() - fast;
    await layer.command('n1', `slow ${SLOW_MS}`);
    const slow = Date.now();
    writeFile(join(mnt, 'timed'), 'y', false);
    const slowMs = Date.now() - slow;
    await layer.command('n1', 'slow 0');
    expect(slowMs).toBeGreaterThanOrEqual(SLOW_MS);
    expect(fastMs).toBeLessThan(SLOW_MS);
  });

  it('answers an unknown command with an error', async () => {
    await expect(layer.command('n1', 'explode')).rejects.toThrow(/unknown command: explode/);
    expect(await layer.command('n1', 'status')).toMatch(/^pending=\d+ fsync-error=off full=off slow=0$/);
  });

  it('drives the layer through its client form (mallory-disk --ask SOCKET LINE), as on other hosts', async () => {
    const binary = await buildDiskLayer();
    const ask = (socket: string, line: string): Promise<CommandResult> =>
      run([binary, '--ask', socket, line]);
    expect(await ask(`${mnt}.sock`, 'slow 5')).toMatchObject({ code: 0, stdout: 'ok\n' });
    expect((await ask(`${mnt}.sock`, 'status')).stdout).toMatch(
      /^ok pending=\d+ fsync-error=off full=off slow=5\n$/,
    );
    expect(await ask(`${mnt}.sock`, 'slow 0')).toMatchObject({ code: 0, stdout: 'ok\n' });
    expect((await ask(`${mnt}.sock`, 'explode')).stdout).toMatch(/^error unknown command: explode\n$/);
    // No layer on that socket: it says so and fails.
    const nobody = await ask(join(root, 'nobody.sock'), 'ping');
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/mallory-disk: connect/);
  });
});
