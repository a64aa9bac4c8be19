import { mkdirSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { moduleDir, refusalOf } from '../_helpers/module-dir.js';

import { UsageError } from '../../src/core/errors.js';
import { kvraft } from '../../src/systems/kvraft/index.js';
import { isSystemPath, loadSystem } from '../../src/systems/load-system.js';

/** A module body defining a system named `name` whose adapter has every required member. */
function definitionSource(name: string): string {
  return `{
  name: ${JSON.stringify(name)},
  defaultNodes: 3,
  bugs: ['slow'],
  create: () => ({
    name: ${JSON.stringify(name)},
    services: ['client'],
    peerServices: [],
    crashPatterns: [/PANIC/],
    doctor: async () => [],
    launch: () => ({ command: 'true', args: [] }),
    ready: async () => true,
    client: () => ({}),
  }),
}`;
}

const { write, at } = moduleDir('mallory-load-system-');
const loadError = (spec: string): Promise<UsageError> => refusalOf(loadSystem, spec);

describe('loadSystem', () => {
  it('gives a built-in by name, recorded by name', async () => {
    const loaded = await loadSystem('kvraft');
    expect(loaded.definition).toBe(kvraft);
    expect(loaded.source).toBe('kvraft');
  });

  it('loads the default export of an .mjs file, recorded by absolute path', async () => {
    const file = write('default.mjs', `export default ${definitionSource('from-default')};\n`);
    const loaded = await loadSystem(file);
    expect(loaded.definition.name).toBe('from-default');
    expect(loaded.definition.bugs).toEqual(['slow']);
    expect(loaded.source).toBe(file);
    expect(loaded.definition.create({ bugs: [] }).services).toEqual(['client']);
  });

  it('loads the export named system of a .js file in an ES module package', async () => {
    write('named/package.json', '{"type": "module"}\n');
    const file = write('named/system.js', `export const system = ${definitionSource('from-named')};\n`);
    expect((await loadSystem(file)).definition.name).toBe('from-named');
  });

  it('prefers the default export to the one named system', async () => {
    const file = write(
      'both.mjs',
      `export const system = ${definitionSource('named')};\nexport default ${definitionSource('default')};\n`,
    );
    expect((await loadSystem(file)).definition.name).toBe('default');
  });

  it('loads module.exports.system of a CommonJS file', async () => {
    const file = write('common.cjs', `module.exports = { system: ${definitionSource('from-cjs')} };\n`);
    expect((await loadSystem(file)).definition.name).toBe('from-cjs');
  });

  it('loads a .ts file through tsx', async () => {
    const file = write(
      'typed.ts',
      `interface Named { readonly name: string }\nconst base: Named = { name: 'from-ts' };\nexport default { ...${definitionSource('from-ts')}, name: base.name };\n`,
    );
    const loaded = await loadSystem(file);
    expect(loaded.definition.name).toBe('from-ts');
    expect(loaded.source).toBe(file);
  });

  it('loads a directory through its package.json exports, main, or index file', async () => {
    write('pkg-exports/package.json', '{"type": "module", "exports": {".": {"import": "./lib/entry.js"}}}');
    const entry = write('pkg-exports/lib/entry.js', `export default ${definitionSource('pkg-exports')};\n`);
    write('pkg-main/package.json', '{"main": "main.mjs"}');
    write('pkg-main/main.mjs', `export default ${definitionSource('pkg-main')};\n`);
    write('pkg-index/index.ts', `export const system = ${definitionSource('pkg-index')};\n`);
    const exported = await loadSystem(at('pkg-exports'));
    expect(exported.definition.name).toBe('pkg-exports');
    expect(exported.source).toBe(entry);
    expect((await loadSystem(at('pkg-main'))).definition.name).toBe('pkg-main');
    expect((await loadSystem(at('pkg-index'))).definition.name).toBe('pkg-index');
  });

  it('tells a path from a built-in name', () => {
    expect(isSystemPath('kvraft')).toBe(false);
    expect(isSystemPath('./kvraft')).toBe(true);
    expect(isSystemPath('my-system.ts')).toBe(true);
    expect(isSystemPath('/abs/dir')).toBe(true);
  });

  describe('errors: one line, UsageError (exit 2)', () => {
    it('an unknown name lists the built-ins and says a path works', async () => {
      const e = await loadError('nosuch');
      expect(e.message).toMatch(/unknown system "nosuch": choose one of .*kvraft.*path of a system module/);
    });

    it('a path that does not exist', async () => {
      expect((await loadError(at('missing.js'))).message).toMatch(/no such file or directory/);
    });

    it('a file that is not a module', async () => {
      const file = write('notes.txt', 'hello\n');
      expect((await loadError(file)).message).toMatch(/not a JavaScript or TypeScript module/);
    });

    it('a module that throws or does not parse', async () => {
      const throws = write('throws.mjs', `throw new Error('boom at load');\n`);
      expect((await loadError(throws)).message).toMatch(/cannot load .*throws\.mjs: boom at load/);
      const broken = write('broken.mjs', 'export default {\n');
      expect((await loadError(broken)).message).toMatch(/cannot load .*broken\.mjs/);
    });

    it('a module without a definition', async () => {
      const file = write('empty.mjs', 'export const other = 1;\n');
      expect((await loadError(file)).message).toMatch(
        /exports no system definition: export default \(or export const system\)/,
      );
      const typed = write('other.ts', 'export const other: number = 1;\nexport default 42;\n');
      expect((await loadError(typed)).message).toMatch(/exports no system definition/);
    });

    it('a definition of the wrong shape names the field', async () => {
      const file = write(
        'shape.mjs',
        `export default { ...${definitionSource('shape')}, defaultNodes: '3' };\n`,
      );
      const e = await loadError(file);
      expect(e.message).toMatch(/not a system definition: field "defaultNodes": Expected number/);
      const noCreate = write('no-create.mjs', `export default { name: 'x', defaultNodes: 3, bugs: [] };\n`);
      expect((await loadError(noCreate)).message).toMatch(/field "create": must be a function/);
    });

    it('an adapter of the wrong shape is refused when created', async () => {
      const file = write(
        'bad-adapter.mjs',
        `export default { name: 'bad', defaultNodes: 3, bugs: [], create: () => ({ name: 'bad' }) };\n`,
      );
      const { definition } = await loadSystem(file);
      expect(() => definition.create({ bugs: [] })).toThrow(
        /bad\.create\(\) did not return a system adapter: field "services"/,
      );
    });

    it('an adapter written for the old capability booleans is told what replaced them', async () => {
      const file = write(
        'old-adapter.mjs',
        `export default ${definitionSource('old').replace('peerServices: [],', 'peerServices: [], supportsLeader: true,')};\n`,
      );
      const { definition } = await loadSystem(file);
      expect(() => definition.create({ bugs: [] })).toThrow(
        /old\.create\(\) returned an adapter with `supportsLeader`, which is gone: give `leadership: \{ leader\(cluster\) \}` instead/,
      );
      const leads = write(
        'leads.mjs',
        `export default ${definitionSource('leads').replace('peerServices: [],', "peerServices: [], leadership: { leader: async () => 'n1' }, membership: { add: 1 },")};\n`,
      );
      const loaded = await loadSystem(leads);
      expect(() => loaded.definition.create({ bugs: [] })).toThrow(
        /field "membership\.add": must be a function/,
      );
    });

    it('membership.quorum, when given, is a boolean', async () => {
      const source = (quorum: string): string =>
        `export default ${definitionSource('quorum').replace('peerServices: [],', `peerServices: [], membership: { add: async () => {}, remove: async () => {}, quorum: ${quorum} },`)};\n`;
      const bad = await loadSystem(write('quorum-bad.mjs', source("'yes'")));
      expect(() => bad.definition.create({ bugs: [] })).toThrow(/field "membership\.quorum"/);
      const good = await loadSystem(write('quorum-good.mjs', source('true')));
      expect(good.definition.create({ bugs: [] }).membership?.quorum).toBe(true);
    });

    it('failoverLoss, when given, names at least one log event and says why', async () => {
      const source = (loss: string): string =>
        `export default ${definitionSource('failover').replace('peerServices: [],', `peerServices: [], failoverLoss: ${loss},`)};\n`;
      const bad = await loadSystem(write('failover-bad.mjs', source("{ events: [], why: 'async' }")));
      expect(() => bad.definition.create({ bugs: [] })).toThrow(
        /field "failoverLoss\.events": must name at least one log event type/,
      );
      const good = await loadSystem(
        write('failover-good.mjs', source("{ events: ['promoted'], why: 'async' }")),
      );
      expect(good.definition.create({ bugs: [] }).failoverLoss).toEqual({
        events: ['promoted'],
        why: 'async',
      });
    });

    it('a directory with no entry', async () => {
      mkdirSync(at('hollow'), { recursive: true });
      expect((await loadError(at('hollow'))).message).toMatch(/no package.json "exports" or "main"/);
      write('dangling/package.json', '{"main": "dist/index.js"}');
      expect((await loadError(at('dangling'))).message).toMatch(
        /package.json points at dist\/index.js, which is not a file/,
      );
    });

    it('every message is one line', async () => {
      const file = write('broken-multi.mjs', 'export default {\n\n\n');
      expect((await loadError(file)).message).not.toContain('\n');
    });
  });
});
