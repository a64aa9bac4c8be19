import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { z } from 'zod';

import { DURABILITIES, type Durability } from '../check/durability.js';
import { READ_CONSISTENCIES, type ReadConsistency } from '../check/sequential-reads.js';
import { UsageError } from '../core/errors.js';
import { SYSTEMS } from './index.js';
import type { SystemAdapter, SystemDefinition } from './system.js';

/** A system definition and how a bug record names it so `mallory replay` finds it again. */
export interface LoadedSystem {
  readonly definition: SystemDefinition;
  /** The built-in name, or the absolute path of the module file a definition was loaded from. */
  readonly source: string;
}

const JS_EXTENSIONS = ['.js', '.mjs', '.cjs'];
const TS_EXTENSIONS = ['.ts', '.mts', '.cts'];
/** Tried in a directory without a package.json entry, in this order. */
const INDEX_FILES = ['index.js', 'index.mjs', 'index.cjs', 'index.ts', 'index.mts'];
const MAX_NODES = 9;

const DefinitionSchema = z.object({
  name: z.string().min(1, 'must be a non-empty string'),
  defaultNodes: z.number().int().min(1).max(MAX_NODES),
  bugs: z.array(z.string()),
  settings: z
    .record(
      z
        .object({ values: z.array(z.string()).min(1), default: z.string(), doc: z.string() })
        .refine((s) => s.values.includes(s.default), 'its default must be one of its values'),
    )
    .optional(),
  create: z.custom<SystemDefinition['create']>((v) => typeof v === 'function', 'must be a function'),
});

const AdapterSchema = z.object({
  name: z.string().min(1),
  services: z.array(z.string()).min(1, 'must name at least one service'),
  peerServices: z.array(z.string()),
  leadership: z
    .object({ leader: z.custom((v) => typeof v === 'function', 'must be a function') })
    .passthrough()
    .optional(),
  membership: z
    .object({
      add: z.custom((v) => typeof v === 'function', 'must be a function'),
      remove: z.custom((v) => typeof v === 'function', 'must be a function'),
    })
    .passthrough()
    .optional(),
  crashPatterns: z.array(z.instanceof(RegExp, { message: 'must be regular expressions' })),
  doctor: z.custom((v) => typeof v === 'function', 'must be a function'),
  launch: z.custom((v) => typeof v === 'function', 'must be a function'),
  ready: z.custom((v) => typeof v === 'function', 'must be a function'),
  client: z.custom((v) => typeof v === 'function', 'must be a function'),
  readConsistency: z.enum(READ_CONSISTENCIES as [ReadConsistency, ...ReadConsistency[]]).optional(),
  durability: z.enum(DURABILITIES as [Durability, ...Durability[]]).optional(),
});

/** Adapter members an older Mallory read, and what says the same now. */
const RETIRED_FIELDS: readonly (readonly [string, string])[] = [
  ['supportsLeader', 'give `leadership: { leader(cluster) }` instead (none: no leader)'],
  [
    'supportsMembership',
    'give `membership: { add, remove, configuration? }` instead (none: no membership changes)',
  ],
  ['memberAdd', 'it is `membership.add` now'],
  ['memberRemove', 'it is `membership.remove` now'],
];

/** Whether `spec` names a file or directory rather than a built-in system. */
export function isSystemPath(spec: string): boolean {
  return (
    spec.includes('/') ||
    spec.includes('\\') ||
    spec.startsWith('.') ||
    [...JS_EXTENSIONS, ...TS_EXTENSIONS].includes(extname(spec))
  );
}

/**
 * The system `--system` names: a built-in (`kvraft`, `etcd`, …) or the path of a module that
 * exports a {@link SystemDefinition} — a `.js`/`.mjs` file, a `.ts` file (loaded through tsx), or
 * a directory (its package.json `exports` or `main`, else its `index.js` / `index.ts`). The
 * definition is the module's default export or its export named `system`. Anything else is a
 * one-line `UsageError`.
 */
export async function loadSystem(spec: string): Promise<LoadedSystem> {
  const builtIn = SYSTEMS[spec];
  if (builtIn && !isSystemPath(spec)) return { definition: builtIn, source: spec };
  const path = resolve(spec);
  if (!existsSync(path)) {
    if (isSystemPath(spec))
      throw new UsageError('unknown-system', `--system ${spec}: no such file or directory`);
    const known = Object.keys(SYSTEMS).sort().join(', ');
    throw new UsageError(
      'unknown-system',
      `unknown system "${spec}": choose one of ${known}, or give the path of a system module (./my-system.js)`,
    );
  }
  const file = statSync(path).isDirectory() ? entryOfDirectory(path, spec) : path;
  const module = await importModule(file, spec);
  const definition = definitionOf(module, spec);
  return { definition: checkedDefinition(definition, spec), source: file };
}

function entryOfDirectory(dir: string, spec: string): string {
  const manifest = join(dir, 'package.json');
  if (existsSync(manifest)) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(manifest, 'utf8'));
    } catch (e) {
      throw new UsageError(
        'bad-system',
        `--system ${spec}: cannot read ${manifest}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const entry = packageEntry(json);
    if (entry !== undefined) {
      const file = resolve(dir, entry);
      if (!existsSync(file) || statSync(file).isDirectory()) {
        throw new UsageError(
          'bad-system',
          `--system ${spec}: package.json points at ${entry}, which is not a file (build the package first?)`,
        );
      }
      return file;
    }
  }
  const index = INDEX_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (index === undefined) {
    throw new UsageError(
      'bad-system',
      `--system ${spec}: the directory has no package.json "exports" or "main", and no index.js or index.ts`,
    );
  }
  return index;
}

/** The file a package's `exports` (its "." entry, import/node/default conditions) or `main` names. */
function packageEntry(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const pkg = json as { exports?: unknown; main?: unknown };
  const fromExports = exportTarget(pkg.exports, 0);
  if (fromExports !== undefined) return fromExports;
  return typeof pkg.main === 'string' ? pkg.main : undefined;
}

const CONDITIONS = ['import', 'node', 'default', 'require'];
const MAX_EXPORTS_DEPTH = 4;

function exportTarget(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null || depth > MAX_EXPORTS_DEPTH) return undefined;
  const record = value as Record<string, unknown>;
  if ('.' in record) return exportTarget(record['.'], depth + 1);
  for (const condition of CONDITIONS) {
    const target = exportTarget(record[condition], depth + 1);
    if (target !== undefined) return target;
  }
  return undefined;
}

async function importModule(file: string, spec: string): Promise<unknown> {
  const ext = extname(file);
  const url = pathToFileURL(file).href;
  try {
    if (TS_EXTENSIONS.includes(ext)) {
      const tsImport = await loadTsImport(file, spec);
      return await tsImport(url, import.meta.url);
    }
    if (!JS_EXTENSIONS.includes(ext)) {
      throw new UsageError(
        'bad-system',
        `--system ${spec}: ${file} is not a JavaScript or TypeScript module (.js, .mjs, .cjs, .ts)`,
      );
    }
    return (await import(url)) as unknown;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new UsageError('bad-system', `--system ${spec}: cannot load ${file}: ${message}`);
  }
}

type TsImport = (specifier: string, parentURL: string) => Promise<unknown>;

/** tsx's `tsImport`, from Mallory's own dependencies or else from beside the system's file. */
async function loadTsImport(file: string, spec: string): Promise<TsImport> {
  try {
    return (await import('tsx/esm/api')).tsImport;
  } catch {
    try {
      const local = createRequire(file).resolve('tsx/esm/api');
      const api = (await import(pathToFileURL(local).href)) as { tsImport: TsImport };
      return api.tsImport;
    } catch {
      throw new UsageError(
        'no-tsx',
        `--system ${spec}: loading a .ts file needs tsx: compile it to JavaScript, or npm install tsx`,
      );
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

const DEFINITION_KEYS = ['name', 'defaultNodes', 'bugs', 'create'];

function looksLikeDefinition(v: unknown): boolean {
  return isObject(v) && 'create' in v && 'name' in v;
}

/** An object meant as a definition, however wrong: it has one of a definition's fields. */
function meantAsDefinition(v: unknown): boolean {
  return isObject(v) && DEFINITION_KEYS.some((k) => k in v);
}

/** The default export, else the export named `system` (CommonJS modules: on `module.exports`). */
function definitionOf(module: unknown, spec: string): unknown {
  const m = isObject(module) ? module : {};
  const commonJs = isObject(m.default) ? m.default : {};
  const candidates = [m.default, m.system, commonJs.default, commonJs.system];
  const found = candidates.find(looksLikeDefinition) ?? candidates.find(meantAsDefinition);
  if (found === undefined) {
    throw new UsageError(
      'bad-system',
      `--system ${spec}: the module exports no system definition: export default (or export const system) a SystemDefinition {name, defaultNodes, bugs, create}`,
    );
  }
  return found;
}

function firstIssue(error: z.ZodError, what: string): string {
  const issue = error.issues[0];
  const field = issue.path.join('.');
  return `${what}${field ? ` "${field}"` : ''}: ${issue.message}`;
}

/** The definition, validated; its `create` checks the adapter it makes, once per run. */
function checkedDefinition(raw: unknown, spec: string): SystemDefinition {
  const parsed = DefinitionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(
      'bad-system',
      `--system ${spec}: not a system definition: ${firstIssue(parsed.error, 'field')} (see docs/writing-a-system.md)`,
    );
  }
  const definition = raw as SystemDefinition;
  return {
    name: definition.name,
    defaultNodes: definition.defaultNodes,
    bugs: definition.bugs,
    ...(definition.settings !== undefined ? { settings: definition.settings } : {}),
    create(options): SystemAdapter {
      const adapter = definition.create(options);
      const retired = RETIRED_FIELDS.find(([field]) => field in (adapter as object));
      if (retired) {
        throw new UsageError(
          'bad-system',
          `--system ${spec}: ${definition.name}.create() returned an adapter with \`${retired[0]}\`, which is gone: ${retired[1]} (see docs/writing-a-system.md)`,
        );
      }
      const checked = AdapterSchema.safeParse(adapter);
      if (!checked.success) {
        throw new UsageError(
          'bad-system',
          `--system ${spec}: ${definition.name}.create() did not return a system adapter: ${firstIssue(checked.error, 'field')} (see docs/writing-a-system.md)`,
        );
      }
      return adapter;
    },
  };
}
