import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { cleanupRegistries } from '../../src/cluster/resources.js';
import { ScratchDir } from '../../src/cluster/scratch-dir.js';

const REPO = resolve(import.meta.dirname, '..', '..');

describe('ScratchDir', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-test-scratch-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
  });
  afterEach(() => {
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  it('is a fresh dir with a registry of its own; dispose removes the dir, what it recorded, and the registry', () => {
    const scratch = new ScratchDir('unit-check');
    expect(scratch.path).toContain(`mallory-unit-check-${process.pid}-`);
    expect(readdirSync(scratch.path)).toEqual([]);
    expect(readdirSync(join(root, 'state'))).toEqual([scratch.registry.file.split('/').pop()]);
    const elsewhere = join(root, 'made-by-the-check');
    scratch.registry.record({ kind: 'file', path: elsewhere });
    writeFileSync(elsewhere, 'x');
    writeFileSync(join(scratch.path, 'config'), 'x');
    scratch.dispose();
    expect(existsSync(scratch.path)).toBe(false);
    expect(existsSync(elsewhere)).toBe(false);
    expect(readdirSync(join(root, 'state'))).toEqual([]);
  });

  it('two at once in one process are two dirs', () => {
    const a = new ScratchDir('unit-check');
    const b = new ScratchDir('unit-check');
    expect(a.path).not.toBe(b.path);
    a.dispose();
    expect(existsSync(b.path)).toBe(true);
    b.dispose();
  });

  it('a process SIGKILLed while it holds one leaves it to cleanup, which removes it', () => {
    // A child makes a scratch dir, prints its path, and is killed before it can dispose of it.
    const script = [
      `import { ScratchDir } from ${JSON.stringify(join(REPO, 'src/cluster/scratch-dir.ts'))};`,
      `const s = new ScratchDir('unit-check');`,
      `process.stdout.write(s.path, () => process.kill(process.pid, 'SIGKILL'));`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO,
      env: process.env,
      encoding: 'utf8',
    });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const left = child.stdout;
    expect(left).toContain('mallory-unit-check-');
    expect(existsSync(left)).toBe(true);
    const report = cleanupRegistries();
    expect(report.runs.map((r) => r.resources)).toEqual([[`dir ${left}`]]);
    expect(existsSync(left)).toBe(false);
    expect(readdirSync(join(root, 'state'))).toEqual([]);
  });
});
