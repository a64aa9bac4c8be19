import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The shared test data: `shared/data` beside the repository (as in CI), else this machine's copy. */
export function sharedDataDir(): string {
  const beside = path.resolve(REPO_ROOT, '..', 'shared', 'data');
  return existsSync(beside) ? beside : '/work/shared/data';
}

export { REPO_ROOT };
