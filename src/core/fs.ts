import { mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { UsageError } from './errors.js';

/** The errno name of a file-system error (`ENOTDIR`, `EACCES` …), or its message. */
export function errorCode(error: unknown): string {
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ?? error.message;
  return String(error);
}

function isDirectory(path: string): boolean | undefined {
  try {
    return statSync(path).isDirectory();
  } catch {
    return undefined;
  }
}

/**
 * `mkdir -p` that fails with one line naming the setting (`what`) and the path. Node's own
 * `mkdirSync(…, {recursive: true})` spins forever under /proc, and its errors are stack traces.
 */
export function makeDirs(path: string, what: string): void {
  const full = resolve(path);
  const missing: string[] = [];
  for (let p = full; ; p = dirname(p)) {
    const dir = isDirectory(p);
    if (dir === true) break;
    if (dir === false) {
      throw new UsageError('bad-dir', `${what} ${path}: ${p} is not a directory: give a directory`);
    }
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p);
    } catch (error) {
      if (errorCode(error) === 'EEXIST' && isDirectory(p) === true) continue;
      throw new UsageError(
        'bad-dir',
        `${what} ${path}: cannot create ${p} (${errorCode(error)}): give a writable directory`,
      );
    }
  }
}

/** The cache dir for helpers built on first use (kept between runs: a cache, not a run's resource). */
export function cacheDir(): string {
  return process.env.MALLORY_CACHE_DIR ?? join(tmpdir(), 'mallory-cache');
}
