import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'src');

/**
 * The layers of src/, lowest first: a module may import its own layer and the ones below it,
 * never one above (the library entry point `src/index.ts` sits on top of all).
 */
const LAYERS = [
  'core',
  'probe',
  'cluster',
  'store',
  'check',
  'systems',
  'sim',
  'observe',
  'timeline',
  'abstraction',
  'workload',
  'policy',
  'nemesis',
  'report',
  'campaign',
  'fleet',
  'cli',
] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The layer of a file under src/ (its first directory), or undefined for src/index.ts. */
function layerOf(file: string): string | undefined {
  const parts = relative(SRC, file).split('/');
  return parts.length > 1 ? parts[0] : undefined;
}

const rank = (layer: string): number => LAYERS.indexOf(layer as (typeof LAYERS)[number]);

/**
 * The imports of `file` (its text given) that reach a higher layer: every relative `from '…'`,
 * `import('…')` and `export … from '…'`, resolved against the file's directory.
 */
function upwardImports(file: string, text: string): string[] {
  const from = layerOf(file);
  if (from === undefined) return [];
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
  return specs
    .map((s) => resolve(dirname(file), s))
    .filter((target) => {
      const to = layerOf(target);
      return to !== undefined && to !== from && rank(to) > rank(from);
    })
    .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`);
}

describe('the layers of src/', () => {
  const files = sourceFiles(SRC);

  it('cover every directory of src/', () => {
    const dirs = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(dirs).toEqual([...LAYERS].sort());
  });

  it('import only downwards', () => {
    const upward = files.flatMap((file) => upwardImports(file, readFileSync(file, 'utf8')));
    expect(upward).toEqual([]);
  });

  it('catches an upward import, and lets a downward one and the entry point pass', () => {
    const text = [
      "import type { SystemAdapter } from '../systems/system.js';",
      "import { sleep } from '../core/clock.js';",
      "import { backend } from './net/backend.js';",
      "const lazy = await import('../campaign/campaign.js');",
    ].join('\n');
    expect(upwardImports(join(SRC, 'cluster', 'x.ts'), text)).toEqual([
      'cluster/x.ts imports systems/system.js',
      'cluster/x.ts imports campaign/campaign.js',
    ]);
    expect(upwardImports(join(SRC, 'index.ts'), text)).toEqual([]);
  });
});
