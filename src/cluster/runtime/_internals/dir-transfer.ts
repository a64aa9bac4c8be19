import { lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { mustRun } from '../../net/_internals/exec.js';
import type { NodeRuntime } from '../runtime.js';

/** The longest a tar of a data dir may take, on the host or here. */
const TAR_TIMEOUT_MS = 10 * 60_000;
/** `st_blocks` counts 512-byte units whatever the filesystem's block size. */
const STAT_BLOCK_BYTES = 512;

/**
 * tar's flags for an archive of a data dir: holes kept (`-S`: etcd preallocates its WAL segments),
 * the entries relative to the dir, owners not kept on extraction (the host's root runs the nodes,
 * whoever ran the fuzzer here).
 */
const packArgv = (dir: string, archive: string): string[] => ['tar', '-S', '-C', dir, '-cf', archive, '.'];
const unpackArgv = (archive: string, dir: string): string[] => [
  'tar',
  '--no-same-owner',
  '-C',
  dir,
  '-xf',
  archive,
];

async function mustOn(runtime: NodeRuntime, argv: readonly string[], what: string): Promise<void> {
  const result = await runtime.exec(argv, { timeoutMs: TAR_TIMEOUT_MS });
  if (result.code !== 0) {
    throw new Error(
      `host ${runtime.host}: cannot ${what} (\`${argv.join(' ')}\`, exit ${result.code}): ${result.stderr.trim()}`,
    );
  }
}

/**
 * Archives `dir` on the runtime's host into `archive` there (a path outside `dir`): the part of a
 * download that needs the dir to hold still, done on the host at its disk's speed.
 */
export async function packDir(runtime: NodeRuntime, dir: string, archive: string): Promise<void> {
  try {
    await mustOn(runtime, packArgv(dir, archive), `archive ${dir}`);
  } catch (error) {
    await runtime.remove(archive);
    throw error;
  }
}

/**
 * Brings an archive `packDir` made on the host here, unpacked into `localDir` (made when missing),
 * and removes it from the host. The archive passes as bytes (the runtime's `readFile`: SFTP over
 * SSH), so any file survives whole. Returns the bytes of the files' data `localDir` now holds.
 */
export async function fetchPacked(runtime: NodeRuntime, archive: string, localDir: string): Promise<number> {
  const local = `${localDir}.tar`;
  try {
    const data = await runtime.readFile(archive);
    mkdirSync(localDir, { recursive: true });
    writeFileSync(local, data);
    await mustRun(unpackArgv(local, localDir), { timeoutMs: TAR_TIMEOUT_MS });
  } finally {
    rmSync(local, { force: true });
    await runtime.remove(archive);
  }
  return storedBytes(localDir);
}

/** Copies `dir` on the runtime's host into `localDir` here, through `archive` on the host. */
export async function downloadDir(
  runtime: NodeRuntime,
  dir: string,
  archive: string,
  localDir: string,
): Promise<number> {
  await packDir(runtime, dir, archive);
  return fetchPacked(runtime, archive, localDir);
}

/**
 * Makes `dir` on the runtime's host hold what `localDir` holds here, and nothing else: archived
 * here next to `localDir`, uploaded to `archive` on the host (a path outside `dir`), unpacked
 * there into the emptied dir, the archives removed.
 */
export async function uploadDir(
  runtime: NodeRuntime,
  localDir: string,
  dir: string,
  archive: string,
): Promise<void> {
  const local = `${localDir}.tar`;
  try {
    await mustRun(packArgv(localDir, local), { timeoutMs: TAR_TIMEOUT_MS });
    await runtime.upload(local, archive);
    await runtime.empty(dir);
    await mustOn(runtime, unpackArgv(archive, dir), `unpack into ${dir}`);
  } finally {
    rmSync(local, { force: true });
    await runtime.remove(archive);
  }
}

/**
 * The bytes the files under `dir` hold on disk, at most their sizes: a sparse file's holes do not
 * count (what a local checkpoint's copy counts too). 0 when `dir` is missing.
 */
export function storedBytes(dir: string): number {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const entry of entries) {
    const path = join(dir, entry);
    const stat = lstatSync(path);
    if (stat.isDirectory()) bytes += storedBytes(path);
    else if (stat.isFile()) bytes += Math.min(stat.size, stat.blocks * STAT_BLOCK_BYTES);
  }
  return bytes;
}
