/**
 * Lists the benchmarks (`npm run bench`): each file of bench/ with the first sentence of its
 * leading comment, as the command that runs it. bench/README.md and docs/benchmarks.md give the
 * figures measured.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const SELF = path.basename(fileURLToPath(import.meta.url));

/** The first sentence of a file's leading comment (`/** … *\/` or `//` lines), on one line. */
export function benchSummary(source: string): string {
  const block = /^\/\*\*([\s\S]*?)\*\//.exec(source)?.[1];
  const lines = /^(?:\/\/[^\n]*\n)+/.exec(source)?.[0];
  const text = (block ?? lines ?? '')
    .split('\n')
    .map((l) => l.replace(/^\s*(?:\*|\/\/)\s?/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  const sentence = /^.*?[.:](?=\s|$)/.exec(text)?.[0] ?? text;
  return sentence.replace(/[.:]$/, '');
}

const files = readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith('.ts') && f !== SELF)
  .sort();
process.stdout.write(
  'Each benchmark prints its figures (bench/README.md and docs/benchmarks.md say what was measured):\n',
);
for (const f of files) {
  process.stdout.write(
    `npx tsx bench/${f}\n    ${benchSummary(readFileSync(path.join(BENCH_DIR, f), 'utf8'))}\n`,
  );
}
