import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * How to type this command again, for the commands Mallory suggests: `mallory` when that name on
 * the PATH is this very program (`npm link`, a global install), else the script's path as the user
 * can run it from here (`./bin/mallory.js`), or its absolute path when it lies outside this directory.
 */
export function invokedAs(
  script: string | undefined = process.argv[1],
  searchPath: string | undefined = process.env['PATH'],
  cwd: string = process.cwd(),
): string {
  if (script === undefined) return 'mallory';
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'mallory');
    if (existsSync(candidate) && sameFile(candidate, script)) return 'mallory';
  }
  const absolute = path.resolve(cwd, script);
  const relative = path.relative(cwd, absolute);
  return relative.startsWith('..') || path.isAbsolute(relative) ? absolute : `./${relative}`;
}
