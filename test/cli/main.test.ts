import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../check/data-dir.js';
import { mallory } from './_helpers/cli.js';

const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
};

describe('mallory (the program)', () => {
  it.each(['--version', '-V'])('%s prints the package version and exits 0', async (flag) => {
    const out = await mallory(flag);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`${manifest.version}\n`);
    expect(out.stderr).toBe('');
  });
});

describe('mallory run --help', () => {
  it('lists every built-in system with its bug switches, from the registry', async () => {
    const { SYSTEMS } = await import('../../src/systems/index.js');
    const out = await mallory('run', '--help');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Built-in systems (--system NAME) and their bug switches (--bug NAME):');
    for (const d of Object.values(SYSTEMS)) {
      const bugs = d.bugs.length > 0 ? d.bugs.join(', ') : '(none)';
      expect(out.stdout).toMatch(new RegExp(`^ {2}${d.name} +--bug ${bugs.replace(/[()]/g, '\\$&')}$`, 'm'));
    }
    expect(out.stdout).toMatch(/^ {2}kvraft +--bug .*ack-before-commit/m);
  });
});
