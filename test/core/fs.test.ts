import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { UsageError } from '../../src/core/errors.js';
import { makeDirs } from '../../src/core/fs.js';

describe('makeDirs', () => {
  it('creates every missing level', () => {
    const root = mkdtempSync(join(tmpdir(), 'mallory-fs-'));
    makeDirs(join(root, 'a', 'b', 'c'), '--store');
    expect(existsSync(join(root, 'a', 'b', 'c'))).toBe(true);
    makeDirs(join(root, 'a', 'b', 'c'), '--store'); // already there: fine
    rmSync(root, { recursive: true });
  });

  // Node's mkdirSync(…, {recursive: true}) spins forever on /proc/x.
  it.each([
    ['/proc/x/store', /^--store \/proc\/x\/store: cannot create \/proc\/x \(ENOENT\)/],
    ['/etc/hostname/store', /^--store \/etc\/hostname\/store: \/etc\/hostname is not a directory/],
    ['/sys/x', /^--store \/sys\/x: cannot create \/sys\/x \(E[A-Z]+\)/],
  ])('%s is one clear UsageError', (path, message) => {
    let error: unknown;
    try {
      makeDirs(path, '--store');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});
