import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll } from 'vitest';

import { UsageError } from '../../src/core/errors.js';

/**
 * A temp dir, made before the file's tests and removed after them, for the modules a loader test
 * writes (a system or a workload defined outside the repo). `write` returns the file's path, `at`
 * the path of a name in the dir.
 */
export function moduleDir(prefix: string): {
  readonly write: (relative: string, text: string) => string;
  readonly at: (relative: string) => string;
} {
  let root = '';
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });
  return {
    write: (relative, text) => {
      const file = join(root, relative);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    at: (relative) => join(root, relative),
  };
}

/** The one-line refusal a loader gives `spec` (anything else it throws is rethrown). */
export async function refusalOf(load: (spec: string) => Promise<unknown>, spec: string): Promise<UsageError> {
  try {
    await load(spec);
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error(`loading ${spec} did not fail`);
}
