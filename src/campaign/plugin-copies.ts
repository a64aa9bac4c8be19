import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';

import { UsageError } from '../core/errors.js';

/** Which flag loaded a user's module: `--system` or `--workload`. */
export type PluginFlag = 'system' | 'workload';

/** A user's module as a bug record keeps it: where it was, its content's hash, and a copy of it. */
export interface PluginRecord {
  readonly flag: PluginFlag;
  /** The absolute path the run loaded it from. */
  readonly path: string;
  readonly sha256: string;
  /** The copy kept in the bug directory, relative to it. */
  readonly copy: string;
}

/** Where a bug record keeps its copies of the run's modules. */
const PLUGINS_DIR = 'plugins';
/** How much of a hash a one-line message shows. */
const HASH_SHOWN = 12;

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * Keeps in `bugDir` a copy and the hash of each module the run loaded from a file (a built-in
 * name is none), so a replay runs the code the bug was found with, or says it cannot.
 */
export function keepPlugins(
  bugDir: string,
  sources: readonly { readonly flag: PluginFlag; readonly source: string }[],
): PluginRecord[] {
  const kept: PluginRecord[] = [];
  for (const { flag, source } of sources) {
    if (!isAbsolute(source) || !existsSync(source) || !statSync(source).isFile()) continue;
    const copy = join(PLUGINS_DIR, `${flag}-${basename(source)}`);
    mkdirSync(join(bugDir, PLUGINS_DIR), { recursive: true });
    copyFileSync(source, join(bugDir, copy));
    kept.push({ flag, path: source, sha256: sha256(source), copy });
  }
  return kept;
}

/**
 * The module each flag of a replay loads: the recorded path when its content is the one the bug
 * was found with; the bug's copy with `useCopies`; else a one-line refusal naming both ways out.
 */
export function pluginSources(
  bugDir: string,
  records: readonly PluginRecord[],
  useCopies: boolean,
): Partial<Record<PluginFlag, string>> {
  const sources: Partial<Record<PluginFlag, string>> = {};
  for (const r of records) {
    const copy = join(bugDir, r.copy);
    if (useCopies) {
      if (!existsSync(copy)) {
        throw new UsageError(
          'plugin-copy-missing',
          `${copy}: the bug's copy of --${r.flag} ${r.path} is gone`,
        );
      }
      sources[r.flag] = copy;
      continue;
    }
    const now = existsSync(r.path) && statSync(r.path).isFile() ? sha256(r.path) : undefined;
    if (now === r.sha256) continue;
    const what =
      now === undefined
        ? 'is gone'
        : `changed (sha256 ${r.sha256.slice(0, HASH_SHOWN)} then, ${now.slice(0, HASH_SHOWN)} now)`;
    throw new UsageError(
      'plugin-changed',
      `--${r.flag} ${r.path} ${what} since the bug was recorded: restore it, or replay the bug's copy with --recorded-plugins (${copy})`,
    );
  }
  return sources;
}
