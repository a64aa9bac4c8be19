import { readFileSync } from 'node:fs';

/** The version in Mallory's own package.json (two levels above this file, in `src/` and `dist/`). */
export function packageVersion(): string {
  const manifest = new URL('../../../package.json', import.meta.url);
  const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
  if (typeof parsed.version !== 'string') throw new Error(`${manifest.pathname} has no version`);
  return parsed.version;
}
