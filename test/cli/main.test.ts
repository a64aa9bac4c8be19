import { execFile } from 'node:child_process';
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

describe('an error nothing caught', () => {
  const script = path.join(REPO_ROOT, 'test', 'fixtures', 'modules', 'throw-outside-command.mjs');
  it.each(['throw', 'reject'])(
    'outside a campaign (%s) is an internal error, exit 2 — never exit 1, which says a bug was found',
    async (how) => {
      const out = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [script, '--version'],
          { env: { ...process.env, LATE_FAILURE: how }, timeout: 30_000 },
          (error, _stdout, stderr) => {
            resolve({ code: error ? (error.code as number) : 0, stderr });
          },
        );
      });
      expect(out.stderr).toMatch(/^mallory: internal error: Error: (thrown|rejected) outside any command/m);
      expect(out.code).toBe(2);
    },
  );
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
