import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { UsageError } from './errors.js';

/**
 * A pluggable piece a flag names (`--system`, `--workload`): a built-in by name, or the path of a
 * module whose default export (or the export named after the piece) defines one. Every problem
 * is a one-line `UsageError` that starts with the flag and what the user gave.
 */
export interface PluggableKind<T> {
  /** `system`, `workload`: the word in messages and the export a module may name its definition. */
  readonly noun: string;
  readonly flag: string;
  readonly builtIns: Readonly<Record<string, T>>;
  /** The type a module must export, with its fields: `SystemDefinition {name, …, create}`. */
  readonly shape: string;
  /** A definition's fields: an object with `name` and `create` is one, with any of them was meant as one. */
  readonly keys: readonly string[];
  /** The `UsageError` code of a module that cannot be loaded or is not a definition. */
  readonly code: string;
}

/** What `loadDefinition` found: a built-in, or what a module exports (not yet validated). */
export type FoundDefinition<T> =
  | { readonly builtIn: T; readonly source: string }
  | { readonly builtIn?: undefined; readonly exported: unknown; readonly source: string };

/**
 * The definition `spec` names: a built-in, or what the module at `spec` exports — a
 * `.js`/`.mjs`/`.cjs` file, a `.ts` file (through tsx), or a directory (its package.json `exports`
 * or `main`, else its `index.js` / `index.ts`). `source` is the built-in's name or the absolute
 * path of the file loaded (what a bug record keeps so a replay loads it again).
 */
export async function loadDefinition<T>(spec: string, kind: PluggableKind<T>): Promise<FoundDefinition<T>> {
  const builtIn = Object.hasOwn(kind.builtIns, spec) ? kind.builtIns[spec] : undefined;
  if (builtIn !== undefined && !isModulePath(spec)) return { builtIn, source: spec };
  const path = resolve(spec);
  if (!existsSync(path)) {
    if (isModulePath(spec))
      throw new UsageError(`unknown-${kind.noun}`, `${kind.flag} ${spec}: no such file or directory`);
    const known = Object.keys(kind.builtIns).sort().join(', ');
    throw new UsageError(
      `unknown-${kind.noun}`,
      `unknown ${kind.noun} "${spec}": choose one of ${known}, or give the path of a ${kind.noun} module (./my-${kind.noun}.js)`,
    );
  }
  const file = statSync(path).isDirectory() ? entryOfDirectory(path, spec, kind) : path;
  const module = await importModule(file, spec, kind);
  const looksLike = (v: unknown): boolean => isObject(v) && 'create' in v && 'name' in v;
  const meantAs = (v: unknown): boolean => isObject(v) && kind.keys.some((k) => k in v);
  const m = isObject(module) ? module : {};
  const commonJs = isObject(m.default) ? m.default : {};
  const candidates = [m.default, m[kind.noun], commonJs.default, commonJs[kind.noun]];
  // One with a wrong field is still taken, so its fault is named rather than the module ignored.
  const exported = candidates.find(looksLike) ?? candidates.find(meantAs);
  if (exported === undefined) {
    throw new UsageError(
      kind.code,
      `${kind.flag} ${spec}: the module exports no ${kind.noun} definition: export default (or export const ${kind.noun}) a ${kind.shape}`,
    );
  }
  return { exported, source: file };
}

const JS_EXTENSIONS = ['.js', '.mjs', '.cjs'];
const TS_EXTENSIONS = ['.ts', '.mts', '.cts'];
/** Tried in a directory without a package.json entry, in this order. */
const INDEX_FILES = ['index.js', 'index.mjs', 'index.cjs', 'index.ts', 'index.mts'];

/** Whether `spec` names a file or directory rather than a built-in (`kvraft`, `register`). */
export function isModulePath(spec: string): boolean {
  return (
    spec.includes('/') ||
    spec.includes('\\') ||
    spec.startsWith('.') ||
    [...JS_EXTENSIONS, ...TS_EXTENSIONS].includes(extname(spec))
  );
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function entryOfDirectory(dir: string, spec: string, kind: PluggableKind<unknown>): string {
  const manifest = join(dir, 'package.json');
  if (existsSync(manifest)) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(manifest, 'utf8'));
    } catch (e) {
      throw new UsageError(
        kind.code,
        `${kind.flag} ${spec}: cannot read ${manifest}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const entry = packageEntry(json);
    if (entry !== undefined) {
      const file = resolve(dir, entry);
      if (!existsSync(file) || statSync(file).isDirectory()) {
        throw new UsageError(
          kind.code,
          `${kind.flag} ${spec}: package.json points at ${entry}, which is not a file (build the package first?)`,
        );
      }
      return file;
    }
  }
  const index = INDEX_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (index === undefined) {
    throw new UsageError(
      kind.code,
      `${kind.flag} ${spec}: the directory has no package.json "exports" or "main", and no index.js or index.ts`,
    );
  }
  return index;
}

/** The file a package's `exports` (its "." entry, import/node/default conditions) or `main` names. */
function packageEntry(json: unknown): string | undefined {
  if (!isObject(json)) return undefined;
  const fromExports = exportTarget(json.exports, 0);
  if (fromExports !== undefined) return fromExports;
  return typeof json.main === 'string' ? json.main : undefined;
}

const CONDITIONS = ['import', 'node', 'default', 'require'];
const MAX_EXPORTS_DEPTH = 4;

function exportTarget(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return value;
  if (!isObject(value) || depth > MAX_EXPORTS_DEPTH) return undefined;
  if ('.' in value) return exportTarget(value['.'], depth + 1);
  for (const condition of CONDITIONS) {
    const target = exportTarget(value[condition], depth + 1);
    if (target !== undefined) return target;
  }
  return undefined;
}

async function importModule(file: string, spec: string, kind: PluggableKind<unknown>): Promise<unknown> {
  const ext = extname(file);
  const url = pathToFileURL(file).href;
  try {
    if (TS_EXTENSIONS.includes(ext)) {
      const tsImport = await loadTsImport(file, spec, kind);
      return await settledOrStalled(tsImport(url, import.meta.url), file);
    }
    if (!JS_EXTENSIONS.includes(ext)) {
      throw new UsageError(
        kind.code,
        `${kind.flag} ${spec}: ${file} is not a JavaScript or TypeScript module (.js, .mjs, .cjs, .ts)`,
      );
    }
    return await settledOrStalled(import(url) as Promise<unknown>, file);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (e instanceof StalledLoad) {
      throw new UsageError(
        kind.code,
        `${kind.flag} ${spec}: module ${file} did not finish loading (its top-level await never settled): make every top-level await resolve or reject`,
      );
    }
    const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new UsageError(kind.code, `${kind.flag} ${spec}: cannot load ${file}: ${message}`);
  }
}

class StalledLoad extends Error {}

/**
 * `loading`, or a `StalledLoad` if the event loop empties first. A module whose top-level await
 * waits on nothing that can ever happen leaves Node nothing to do; without this Node exits 0 in
 * silence, with no run made and no word why.
 */
async function settledOrStalled<T>(loading: Promise<T>, file: string): Promise<T> {
  let onIdle: (() => void) | undefined;
  const stalled = new Promise<never>((_, reject) => {
    onIdle = () => {
      reject(new StalledLoad(file));
    };
    process.once('beforeExit', onIdle);
  });
  try {
    return await Promise.race([loading, stalled]);
  } finally {
    if (onIdle !== undefined) process.removeListener('beforeExit', onIdle);
  }
}

type TsImport = (specifier: string, parentURL: string) => Promise<unknown>;

/** tsx's `tsImport`, from Mallory's own dependencies or else from beside the module's file. */
async function loadTsImport(file: string, spec: string, kind: PluggableKind<unknown>): Promise<TsImport> {
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
        `${kind.flag} ${spec}: loading a .ts file needs tsx: compile it to JavaScript, or npm install tsx`,
      );
    }
  }
}
