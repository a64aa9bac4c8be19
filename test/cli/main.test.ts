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
