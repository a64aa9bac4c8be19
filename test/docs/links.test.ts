import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { relativeLinks } from '../_helpers/markdown.js';

const REPO = resolve(import.meta.dirname, '..', '..');
/** Pages other topics add to docs/ that README and the docs already link to. */
const ADDED_ELSEWHERE = new Set(['docs/report.md', 'docs/remote-hosts.md']);

const pages = [
  'README.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('the links of README.md and docs/*.md', () => {
  it('finds the pages and their links (the check below is not vacuous)', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/tutorial.md', 'docs/commands.md']));
    const readme = relativeLinks(readFileSync(join(REPO, 'README.md'), 'utf8'));
    expect(readme).toEqual(
      expect.arrayContaining(['docs/tutorial.md', 'docs/jepsen.md', 'docs/commands.md']),
    );
  });

  it.each(pages)('every relative link of %s points at a file or directory of the repository', (page) => {
    const missing = relativeLinks(readFileSync(join(REPO, page), 'utf8'))
      .map((target) => relative(REPO, resolve(dirname(join(REPO, page)), target)))
      .filter((path) => !existsSync(join(REPO, path)) && !ADDED_ELSEWHERE.has(path));
    expect(missing).toEqual([]);
  });
});

describe('relativeLinks', () => {
  it('takes inline links and reference definitions, drops anchors, URLs and code', () => {
    const text = [
      'See [a](docs/a.md#part), [b](<b c.md>), [same page](#top) and [web](https://example.org/x.md).',
      'Inline code is an example: `[x](nowhere.md)`.',
      '```md',
      '[y](nowhere-either.md)',
      '```',
      '[ref]: ../up.md',
    ].join('\n');
    expect(relativeLinks(text)).toEqual(['docs/a.md', 'b c.md', '../up.md']);
  });
});
