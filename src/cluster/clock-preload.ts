import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import type { ResourceRegistry } from './resources.js';
import { shellQuote } from '../core/shell.js';
import { localRuntime } from './runtime/local.js';
import type { NodeRuntime } from './runtime/runtime.js';

/** Where Debian's `faketime` package puts the preload library, per architecture. */
export const LIBFAKETIME_PATHS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];
export const LIBFAKETIME_NAME = 'libfaketime.so.1';
const MS_PER_S = 1000;
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
 * A control file's text: libfaketime's relative offset in seconds (it takes fractions), so
 * `-60000` ms is `-60.000` and no offset is `+0.000`.
 */
export function faketimeSpec(offsetMs: number): string {
  const rounded = Math.round(offsetMs);
  const sign = rounded < 0 ? '-' : '+';
  return `${sign}${(Math.abs(rounded) / MS_PER_S).toFixed(3)}\n`;
}

/** Where a node's clock control file lives: beside its logs, in the run dir. */
export function clockControlFile(runDir: string, node: string): string {
  return join(runDir, 'nodes', node, 'clock.faketime');
}

/** Writes a control file so a reader sees the old text or the new, never a partial one. */
export function writeControlFile(file: string, offsetMs: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.tmp`;
  writeFileSync(temp, faketimeSpec(offsetMs));
  renameSync(temp, file);
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

/**
 * How node processes get a movable wall clock: libfaketime preloaded, reading the node's control
 * file on every call, with monotonic clocks left real (timers and timeouts keep working).
 */
export class ClockPreload implements NodeClockPreload {
  constructor(
    private readonly library: string,
    private readonly runDir: string,
  ) {}

  /** The environment a node process starts with. */
  env(node: string): Record<string, string> {
    const file = clockControlFile(this.runDir, node);
    if (!existsSync(file)) writeControlFile(file, 0);
    return preloadEnv(this.library, file);
  }

  /** The node's libfaketime files (see `faketimeSharedFiles`). */
  sharedFiles(pid: number): string[] {
    return faketimeSharedFiles(pid);
  }

  trackSharedFiles(_node: string, pid: number, registry: ResourceRegistry): RemoveSharedFiles {
    const ids = this.sharedFiles(pid).map((path) => registry.record({ kind: 'file', path }));
    return () => {
      for (const id of ids) registry.release(id);
    };
  }
}
