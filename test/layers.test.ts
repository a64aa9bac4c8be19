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
  return importSpecs(text)
    .map((s) => resolve(dirname(file), s))
    .filter((target) => {
      const to = layerOf(target);
      return to !== undefined && to !== from && rank(to) > rank(from);
    })
    .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`);
}

/** The relative specifiers a file's text imports: every `from '…'`, `import('…')` and `export … from '…'`. */
function importSpecs(text: string): string[] {
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
}

/**
 * The imports of `file` (its text given) that reach into another stage's `_internals/`: a stage's
 * private helpers are for that stage alone (the entry point `src/index.ts` belongs to no stage, so
 * every `_internals/` is foreign to it). What another stage needs lives in `core/` or in the owning
 * stage's public files.
 */
function foreignInternalImports(file: string, text: string): string[] {
  const from = layerOf(file);
  return importSpecs(text)
    .map((s) => resolve(dirname(file), s))
    .filter((target) => relative(SRC, target).split('/').includes('_internals') && layerOf(target) !== from)
    .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`);
}

/** The source file a relative import resolves to (`./x.js` is `./x.ts`), resolved against `file`. */
function importedFile(file: string, spec: string): string {
  return resolve(dirname(file), spec).replace(/\.js$/, '.ts');
}

/**
 * The import circles among `graph` (file to the files it imports): each strongly connected group
 * of two or more files, or one file importing itself, as its sorted paths. Tarjan's algorithm.
 */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
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

  it("import no other stage's _internals/", () => {
    const foreign = files.flatMap((file) => foreignInternalImports(file, readFileSync(file, 'utf8')));
    expect(foreign).toEqual([]);
  });

  it("catches an import into another stage's _internals/, and lets a stage's own pass", () => {
    const text = [
      "import { parseByteSize } from '../../check/_internals/memory-limit.js';",
      "import { shellQuote } from '../runtime/_internals/shell.js';",
      "import { packetEffectsOf } from './packet-effects.js';",
    ].join('\n');
    expect(foreignInternalImports(join(SRC, 'cluster', '_internals', 'x.ts'), text)).toEqual([
      'cluster/_internals/x.ts imports check/_internals/memory-limit.js',
    ]);
    expect(
      foreignInternalImports(join(SRC, 'index.ts'), "export * from './workload/_internals/w.js';"),
    ).toEqual(['index.ts imports workload/_internals/w.js']);
  });

  it('hold no import circle', () => {
    const graph = new Map(
      files.map((file) => [file, importSpecs(readFileSync(file, 'utf8')).map((s) => importedFile(file, s))]),
    );
    const circles = importCircles(graph).map((group) => group.map((f) => relative(SRC, f)).join(' <-> '));
    expect(circles).toEqual([]);
  });

  it('finds a circle, also one through a third file, and none in a chain', () => {
    const circle = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(importCircles(circle)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      importCircles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });
});
