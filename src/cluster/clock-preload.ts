import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where Debian's `faketime` package puts the preload library, per architecture. */
const LIBFAKETIME_PATHS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];
const LIBFAKETIME_NAME = 'libfaketime.so.1';
const MS_PER_S = 1000;
/** libfaketime's shared memory and semaphore, named after the first process that loads it. */
const SHM_DIR = '/dev/shm';

/** The fix printed when libfaketime is missing. */
export const LIBFAKETIME_FIX = 'apt-get install faketime';

/** The path of libfaketime.so.1, or undefined when the `faketime` package is not installed. */
export function findLibfaketime(): string | undefined {
  const known = LIBFAKETIME_PATHS.find((p) => existsSync(p));
  if (known) return known;
  try {
    const files = execFileSync('dpkg', ['-L', 'libfaketime'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return files.split('\n').find((f) => f.endsWith(`/${LIBFAKETIME_NAME}`) && existsSync(f));
  } catch {
    return undefined;
  }
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
 * How node processes get a movable wall clock: libfaketime preloaded, reading the node's control
 * file on every call, with monotonic clocks left real (timers and timeouts keep working).
 */
export class ClockPreload {
  constructor(
    private readonly library: string,
    private readonly runDir: string,
  ) {}

  /** The environment a node process starts with. */
  env(node: string): Record<string, string> {
    const file = clockControlFile(this.runDir, node);
    if (!existsSync(file)) writeControlFile(file, 0);
    return {
      LD_PRELOAD: this.library,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    };
  }

  /**
   * The files libfaketime creates for a process it is loaded into (its children share them); a
   * process that exits normally removes them, a killed one leaves them for the harness to remove.
   */
  sharedFiles(pid: number): string[] {
    return [join(SHM_DIR, `faketime_shm_${pid}`), join(SHM_DIR, `sem.faketime_sem_${pid}`)];
  }
}
