import { mkdirSync, rmSync, writeFileSync } from 'node:fs';

import { storedBytes } from '../../_internals/copy-tree.js';
import { waitGroupsStoppedScript } from '../../_internals/group-stopped.js';
import { mustRun } from '../../../core/exec.js';
import type { NodeRuntime } from '../runtime.js';
import { emptyOn, readFileOn, removeOn, uploadTo } from '../files.js';

/** The longest a copy, archive or unpack of a data dir may take, on the host or here. */
const TRANSFER_TIMEOUT_MS = 10 * 60_000;

/**
 * tar's flags for an archive of a data dir: holes kept (`-S`), the entries relative to the dir,
 * owners not kept on extraction (the host's root runs the nodes, whoever ran the fuzzer here).
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
  const result = await runtime.exec(argv, { timeoutMs: TRANSFER_TIMEOUT_MS });
  if (result.code !== 0) {
    throw new Error(
      `host ${runtime.host}: cannot ${what} (\`${argv.join(' ')}\`, exit ${result.code}): ${result.stderr.trim()}`,
    );
  }
}

/**
 * Copies `dir` on the runtime's host to `snapshot` there (a path outside `dir`, replaced): the
 * part of a download that needs the dir to hold still, done on the host at its disk's speed. Runs
 * of zeros become holes (`cp --sparse=always`): etcd preallocates its WAL segments with
 * `fallocate`, 64 MiB of zeros each that would otherwise be archived and sent in full. With
 * `stoppedGroups` (the node's process group, just sent SIGSTOP) it first waits until their tasks
 * have stopped.
 */
export async function snapshotDir(
  runtime: NodeRuntime,
  dir: string,
  snapshot: string,
  stoppedGroups: readonly number[] = [],
): Promise<void> {
  const copy = 'rm -rf "$2" && mkdir -p "$2" && cp -a --sparse=always "$1/." "$2/"';
  const script = stoppedGroups.length > 0 ? `${waitGroupsStoppedScript(stoppedGroups)}; ${copy}` : copy;
  try {
    await mustOn(runtime, ['sh', '-c', script, 'sh', dir, snapshot], `copy ${dir}`);
  } catch (error) {
    await removeOn(runtime, snapshot);
    throw error;
  }
}

/**
 * Brings a snapshot `snapshotDir` made on the host here, into `localDir` (made when missing), and
 * removes it from the host: archived there with its holes, the archive passed as bytes (the
 * runtime's `readFile`: SFTP over SSH, so any file arrives whole) and unpacked here. Returns the
 * bytes of the files' data `localDir` now holds (holes not counted). The archive is held whole in
 * memory on its way: fine for data dirs of a few hundred MiB, not for many GiB.
 */
export async function fetchSnapshot(
  runtime: NodeRuntime,
  snapshot: string,
  localDir: string,
): Promise<number> {
  const archive = `${snapshot}.tar`;
  const local = `${localDir}.tar`;
  try {
    await mustOn(runtime, packArgv(snapshot, archive), `archive ${snapshot}`);
    const data = await readFileOn(runtime, archive);
    mkdirSync(localDir, { recursive: true });
    writeFileSync(local, data);
    await mustRun(unpackArgv(local, localDir), { timeoutMs: TRANSFER_TIMEOUT_MS });
  } finally {
    rmSync(local, { force: true });
    await removeOn(runtime, archive);
    await removeOn(runtime, snapshot);
  }
  return storedBytes(localDir);
}

/** Copies `dir` on the runtime's host into `localDir` here, through `snapshot` on the host. */
export async function downloadDir(
  runtime: NodeRuntime,
  dir: string,
  snapshot: string,
  localDir: string,
): Promise<number> {
  await snapshotDir(runtime, dir, snapshot);
  return fetchSnapshot(runtime, snapshot, localDir);
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
    await mustRun(packArgv(localDir, local), { timeoutMs: TRANSFER_TIMEOUT_MS });
    await uploadTo(runtime, local, archive);
    await emptyOn(runtime, dir);
    await mustOn(runtime, unpackArgv(archive, dir), `unpack into ${dir}`);
  } finally {
    rmSync(local, { force: true });
    await removeOn(runtime, archive);
  }
}
