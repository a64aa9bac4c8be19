import { join } from 'node:path';

import type { ResourceRegistry } from './resources.js';
import { shellLine, shellQuote } from '../core/shell.js';
import { commandPidOn } from './_internals/node-pid.js';
import { ControlFiles } from './clock-control-files.js';

export { clockControlFile, faketimeSpec, writeControlFile } from './clock-control-files.js';
import { localRuntime } from './runtime/local.js';
import type { NodeRuntime } from './runtime/runtime.js';
import { undoOn } from './runtime/undo-on.js';

/** Where Debian's `faketime` package puts the preload library, per architecture. */
export const LIBFAKETIME_PATHS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];
export const LIBFAKETIME_NAME = 'libfaketime.so.1';
/** libfaketime's shared memory and semaphore, named after the first process that loads it. */
const SHM_DIR = '/dev/shm';

/**
 * The files libfaketime creates for a process it is loaded into (its children share them); a
 * process that exits normally removes them, a killed one leaves them for the harness to remove.
 */
export function faketimeSharedFiles(pid: number): string[] {
  return [join(SHM_DIR, `faketime_shm_${pid}`), join(SHM_DIR, `sem.faketime_sem_${pid}`)];
}

/** Removes what a node's process left of libfaketime's files, once it has ended. */
export type RemoveSharedFiles = () => void | Promise<void>;

/** How a cluster gives its node processes a movable wall clock (on this host, or on the nodes'). */
export interface NodeClockPreload {
  /** The environment a node process starts with (its control file made, at no offset, if missing). */
  env(node: string): Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /**
   * Records in the registry the libfaketime files of the node's process `pid` (the group's leader
   * the runtime started), so a crash of the fuzzer leaves none; the function removes them.
   */
  trackSharedFiles(
    node: string,
    pid: number,
    registry: ResourceRegistry,
  ): RemoveSharedFiles | Promise<RemoveSharedFiles>;
}

/** The fix printed when libfaketime is missing. */
export const LIBFAKETIME_FIX = 'apt-get install faketime';

/** The shell text that prints where libfaketime is: a known Debian path, else what `dpkg -L libfaketime` lists. */
function findLibfaketimeScript(): string {
  return (
    `for p in ${LIBFAKETIME_PATHS.map(shellQuote).join(' ')}; do [ -e "$p" ] && { echo "$p"; exit 0; }; done; ` +
    `for p in $(dpkg -L libfaketime 2>/dev/null | grep ${shellQuote(`/${LIBFAKETIME_NAME}$`)}); do ` +
    `[ -e "$p" ] && { echo "$p"; exit 0; }; done; exit 1`
  );
}

/** libfaketime's path on the runtime's host, or undefined when the `faketime` package is not there. */
export async function findLibfaketimeOn(runtime: NodeRuntime): Promise<string | undefined> {
  const found = await runtime.exec(['sh', '-c', findLibfaketimeScript()]);
  const path = found.stdout.trim().split('\n')[0] ?? '';
  return found.code === 0 && path !== '' ? path : undefined;
}

/** The path of libfaketime.so.1 on this machine, or undefined when the `faketime` package is not installed. */
export function findLibfaketime(): Promise<string | undefined> {
  return findLibfaketimeOn(localRuntime());
}

/**
 * The environment that preloads `library` into a process, reading `controlFile` on every call,
 * with monotonic clocks left real (timers and timeouts keep working).
 */
export function preloadEnv(library: string, controlFile: string): Record<string, string> {
  return {
    LD_PRELOAD: library,
    FAKETIME_TIMESTAMP_FILE: controlFile,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/** What to run on a host that lacks libfaketime. */
export const HOST_LIBFAKETIME_FIX = 'apt-get install -y faketime';

/** The one line that refuses clock faults on a host without libfaketime. */
export function libfaketimeMissing(host: string): string {
  return `host ${host}: clock faults need libfaketime there (no ${LIBFAKETIME_NAME} in its faketime package paths): ${HOST_LIBFAKETIME_FIX} on the host, or drop clock from --faults`;
}

/**
 * How node processes get a movable wall clock, wherever they run: libfaketime preloaded (at its
 * path where the node runs), reading the node's control file (`ControlFiles`) on every call, with
 * monotonic clocks left real (timers and timeouts keep working). The shared-memory files a killed
 * node leaves in /dev/shm there are recorded where they are, and removed there.
 */
export class ClockPreload implements NodeClockPreload {
  constructor(
    private readonly libraryOf: (node: string) => string,
    private readonly files: ControlFiles,
    private readonly runtimeOf: (node: string) => NodeRuntime,
  ) {}

  async env(node: string): Promise<Record<string, string>> {
    await this.files.write(node, 0, true);
    return preloadEnv(this.libraryOf(node), this.files.path(node));
  }

  /**
   * The files are named after the node's own pid: where the runtime starts a node under a shell
   * that leads its group, that shell's child (`commandPidOn`).
   */
  async trackSharedFiles(node: string, pid: number, registry: ResourceRegistry): Promise<RemoveSharedFiles> {
    const runtime = this.runtimeOf(node);
    const nodePid = await commandPidOn(runtime, pid);
    // Ended before it forked: libfaketime was never loaded, so it made no files.
    if (nodePid === undefined) return () => undefined;
    const files = faketimeSharedFiles(nodePid);
    if (runtime.capabilities.sharedFilesystem) {
      // Here: files the registry removes itself, at once.
      const ids = files.map((path) => registry.record({ kind: 'file', path }));
      return () => {
        for (const id of ids) registry.release(id);
      };
    }
    const id = registry.record(
      undoOn(
        runtime.place,
        shellLine(['rm', '-f', ...files]),
        `libfaketime files of ${node} (pid ${nodePid}) on ${runtime.host}`,
      ),
    );
    return async () => {
      const removed = await runtime.exec(['rm', '-f', ...files]).catch(() => undefined);
      // Not removed now (the connection is gone): the registry's own connection removes them, or cleanup.
      if (removed?.code === 0) registry.forget(id);
    };
  }
}

/** libfaketime at `library` here preloaded into nodes on this machine, their control files in `runDir`. */
export function localClockPreload(library: string, runDir: string): ClockPreload {
  const runtime = localRuntime();
  return new ClockPreload(
    () => library,
    new ControlFiles(runDir, () => runtime),
    () => runtime,
  );
}
