import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { fencedBlocks } from '../_helpers/markdown.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const blocks = fencedBlocks(readFileSync(join(REPO, 'docs', 'tutorial.md'), 'utf8'));

/**
 * docs/tutorial.md shows the sample's files in full (blocks marked `file=NAME`) and CI runs its
 * commands (blocks marked `sh tutorial`, test/e2e/tutorial.test.ts) on examples/tutorial/: the
 * code a reader sees must be the code that runs.
 */
describe('docs/tutorial.md', () => {
  const files = blocks.filter((b) => /\bfile=/.test(b.info));

  it('shows both files of the sample, each exactly as examples/tutorial/ has it', () => {
    expect(files.map((b) => /\bfile=(\S+)/.exec(b.info)![1]).sort()).toEqual(['server.mjs', 'system.mjs']);
    for (const block of files) {
      const name = /\bfile=(\S+)/.exec(block.info)![1];
      expect(block.body).toBe(readFileSync(join(REPO, 'examples', 'tutorial', name), 'utf8'));
    }
  });

  it('marks the commands CI runs: the project, the install, the campaign', () => {
    const commands = blocks
      .filter((b) => b.info === 'sh tutorial')
      .map((b) => b.body)
      .join('');
    expect(commands).toMatch(/^npm init -y$/m);
    expect(commands).toMatch(/^npm install .*file:"\$MALLORY_DIR"$/m);
    expect(commands).toMatch(/^npx mallory run --system \.\/system\.mjs --time \d+s --seed \d+$/m);
  });
});
