import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { storedBytes } from '../../../../src/cluster/_internals/copy-tree.js';
import { downloadDir, uploadDir } from '../../../../src/cluster/runtime/_internals/dir-transfer.js';
import { LocalRuntime } from '../../../../src/cluster/runtime/local.js';

const MIB = 1024 ** 2;

/** Every byte value, twice, and a few that break text handling (NUL, CR LF, invalid UTF-8). */
const BINARY = Buffer.concat([
  Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)),
  Buffer.from([0, 13, 10, 0xff, 0xfe, 0xc3]),
]);

describe('dir-transfer: a data dir to and from a runtime host, byte for byte (local runtime, real files)', () => {
  let root: string;
  const runtime = new LocalRuntime();

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-dir-transfer-'));
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  /**
   * A data dir with a binary file, a nested one, an empty dir, a symlink, a mode, a sparse file
   * and a preallocated one (all its zeros written, as `fallocate` leaves them: no holes).
   */
  const makeDataDir = (dir: string): void => {
    mkdirSync(join(dir, 'wal', 'segments'), { recursive: true });
    mkdirSync(join(dir, 'empty'));
    writeFileSync(join(dir, 'state.bin'), BINARY);
    writeFileSync(join(dir, 'wal', 'segments', '0001.log'), Buffer.alloc(3000, 0xab));
    writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o750 });
    symlinkSync('wal/segments/0001.log', join(dir, 'current'));
    // 8 MiB with 4 KiB of data at its end: preallocated, as etcd's WAL segments are.
    const fd = openSync(join(dir, 'wal', 'prealloc.tmp'), 'w');
    writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, 8 * MIB - 4096);
    closeSync(fd);
    writeFileSync(
      join(dir, 'wal', 'fallocated.wal'),
      Buffer.concat([Buffer.alloc(4096, 2), Buffer.alloc(8 * MIB)]),
    );
  };

  const expectSameTree = (a: string, b: string): void => {
    expect(readdirSync(b, { recursive: true }).sort()).toEqual(readdirSync(a, { recursive: true }).sort());
    expect(readFileSync(join(b, 'state.bin')).equals(BINARY)).toBe(true);
    expect(readFileSync(join(b, 'wal', 'segments', '0001.log'))).toEqual(Buffer.alloc(3000, 0xab));
    expect(statSync(join(b, 'run.sh')).mode & 0o777).toBe(0o750);
    expect(readlinkSync(join(b, 'current'))).toBe('wal/segments/0001.log');
    const prealloc = readFileSync(join(b, 'wal', 'prealloc.tmp'));
    expect(prealloc.length).toBe(8 * MIB);
    expect(prealloc.subarray(8 * MIB - 4096).equals(Buffer.alloc(4096, 1))).toBe(true);
    expect(prealloc.subarray(0, 8 * MIB - 4096).some((x) => x !== 0)).toBe(false);
    const fallocated = readFileSync(join(b, 'wal', 'fallocated.wal'));
    expect(fallocated.length).toBe(4096 + 8 * MIB);
    expect(fallocated.subarray(0, 4096).equals(Buffer.alloc(4096, 2))).toBe(true);
    expect(fallocated.subarray(4096).some((x) => x !== 0)).toBe(false);
  };

  it('downloads a dir from the host whole, its zeros as holes, and leaves no copy or archive behind', async () => {
    const hostDir = join(root, 'host', 'n1');
    makeDataDir(hostDir);
    const snapshot = join(root, 'host', '.checkpoint-n1');
    const local = join(root, 'checkpoint', 'n1');

    const bytes = await downloadDir(runtime, hostDir, snapshot, local);

    expectSameTree(hostDir, local);
    expect(readdirSync(join(root, 'host'))).toEqual(['n1']);
    expect(readdirSync(join(root, 'checkpoint'))).toEqual(['n1']);
    // The two 8 MiB files count as the 4 KiB each holds (give or take a filesystem block).
    expect(bytes).toBe(storedBytes(local));
    expect(bytes).toBeGreaterThanOrEqual(BINARY.length + 3000 + 2 * 4096);
    expect(bytes).toBeLessThan(MIB);
  });

  it("uploads a dir to the host: what was in the host's dir goes, the local dir is unchanged", async () => {
    const local = join(root, 'checkpoint', 'n1');
    makeDataDir(local);
    const hostDir = join(root, 'host', 'n1');
    mkdirSync(join(hostDir, 'stale'), { recursive: true });
    writeFileSync(join(hostDir, 'stale', 'old.db'), 'from another run');
    const archive = join(root, 'host', '.restore-n1.tar');

    await uploadDir(runtime, local, hostDir, archive);

    expectSameTree(local, hostDir);
    expect(existsSync(join(hostDir, 'stale'))).toBe(false);
    expect(existsSync(archive)).toBe(false);
    expect(existsSync(`${local}.tar`)).toBe(false);
    expect(readdirSync(join(root, 'checkpoint'))).toEqual(['n1']);
  });

  it('says which host and dir when the dir is not there, and leaves nothing half-made here', async () => {
    const local = join(root, 'checkpoint', 'n1');
    const missing = join(root, 'host', 'nope');
    mkdirSync(join(root, 'host'));
    await expect(downloadDir(runtime, missing, join(root, 'host', 'x'), local)).rejects.toThrow(
      new RegExp(`^host local: cannot copy ${missing} \\(\`sh -c `),
    );
    expect(existsSync(local)).toBe(false);
    expect(readdirSync(join(root, 'host'))).toEqual([]);
  });

  it('counts no bytes for a missing dir', () => {
    expect(storedBytes(join(root, 'none'))).toBe(0);
  });
});
