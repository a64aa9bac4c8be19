import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '..', '..');

describe('npm run bench', () => {
  it('lists every benchmark of bench/ with the command that runs it and what it measures', () => {
    const out = execFileSync('npm', ['run', '--silent', 'bench'], { cwd: REPO, encoding: 'utf8' });
    const lines = out.split('\n');
    const benches = readdirSync(join(REPO, 'bench')).filter((f) => f.endsWith('.ts') && f !== 'list.ts');
    expect(benches.length).toBeGreaterThan(0);
    for (const f of benches) {
      const at = lines.indexOf(`npx tsx bench/${f}`);
      expect(at, `bench/${f} listed`).toBeGreaterThanOrEqual(0);
      // The first sentence of its leading comment, on the next line.
      expect(lines[at + 1], `what bench/${f} measures`).toMatch(/^ {4}\S.{8,}/);
    }
  });
});
