import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  emptyScript,
  mkdirScript,
  removeScript,
} from '../../../../src/cluster/runtime/_internals/file-scripts.js';

const dir = mkdtempSync(join(tmpdir(), 'mallory-file-scripts-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs shell text as the remote runtimes do (`sh -c`), returning its exit status. */
const sh = (script: string): number | null => spawnSync('sh', ['-c', script]).status;

describe('the file scripts shared by the SSH and docker runtimes', () => {
  it('mkdir makes a dir and its parents, also with a quote and spaces in its name, and is fine when it is there', () => {
    const path = join(dir, "a b'c", 'd');
    expect(sh(mkdirScript(path))).toBe(0);
    expect(existsSync(path)).toBe(true);
    expect(sh(mkdirScript(path))).toBe(0);
  });

  it('remove removes a dir and all under it, and is fine when it is not there', () => {
    const path = join(dir, 'gone $HOME');
    mkdirSync(join(path, 'sub'), { recursive: true });
    writeFileSync(join(path, 'sub', 'f'), 'x');
    expect(sh(removeScript(path))).toBe(0);
    expect(existsSync(path)).toBe(false);
    expect(sh(removeScript(path))).toBe(0);
  });

  it('empty leaves the dir there and empty (hidden files too), and makes it when missing', () => {
    const path = join(dir, 'data');
    mkdirSync(join(path, 'sub'), { recursive: true });
    writeFileSync(join(path, '.hidden'), 'x');
    writeFileSync(join(path, 'sub', 'f'), 'x');
    expect(sh(emptyScript(path))).toBe(0);
    expect(readdirSync(path)).toEqual([]);
    rmSync(path, { recursive: true });
    expect(sh(emptyScript(path))).toBe(0);
    expect(readdirSync(path)).toEqual([]);
  });

  it('fails (non-zero) when it cannot do what it says', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    expect(sh(mkdirScript(join(file, 'sub')))).not.toBe(0);
    expect(sh(emptyScript(join(file, 'sub')))).not.toBe(0);
  });
});
