import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

import { mkdirOn, uploadTo } from './runtime/files.js';
import type { NodeRuntime } from './runtime/runtime.js';

/** What the check and the copy need of a host. */
/** What placing a program on a host needs of its runtime. */
export type ProgramHost = Pick<NodeRuntime, 'host' | 'exec' | 'put'>;

const hashes = new Map<string, { stamp: string; hash: string }>();

/** The sha256 of a local file (hex), read once per version of it. */
export function fileHash(path: string): string {
  const stat = statSync(path);
  const stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const known = hashes.get(path);
  if (known?.stamp === stamp) return known.hash;
  const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
  hashes.set(path, { stamp, hash });
  return hash;
}

/** Whether the host has, at `path`, the file this machine has there (same sha256). */
export async function hostHasSame(host: ProgramHost, path: string): Promise<boolean> {
  const result = await host.exec(['sha256sum', '--', path], { timeoutMs: 30_000 });
  return result.code === 0 && result.stdout.split(/\s/)[0] === fileHash(path);
}

/**
 * Where a node program built on this machine (`LaunchSpec.built`) runs from on a host: the path it
 * has here when the host has the same file there, else a copy under the run's dir on the host
 * (`<root>/bin/<hash>/<name>`), uploaded once per host and removed with the run's dir.
 */
export class BuiltPrograms {
  /** Host → local path → the path it runs from there. */
  private readonly placed = new Map<string, Map<string, Promise<string>>>();

  constructor(private readonly root: string) {}

  place(host: ProgramHost, path: string): Promise<string> {
    let onHost = this.placed.get(host.host);
    if (!onHost) {
      onHost = new Map();
      this.placed.set(host.host, onHost);
    }
    let placing = onHost.get(path);
    if (!placing) {
      placing = this.copy(host, path);
      onHost.set(path, placing);
      // A failed copy is tried again at the next start.
      placing.catch(() => onHost.delete(path));
    }
    return placing;
  }

  private async copy(host: ProgramHost, path: string): Promise<string> {
    if (await hostHasSame(host, path)) return path;
    const dir = join(this.root, 'bin', fileHash(path).slice(0, 16));
    const target = join(dir, basename(path));
    await mkdirOn(host, dir);
    await uploadTo(host, path, target);
    return target;
  }
}

/** The shared libraries a local program loads (their sonames, as `ldd` resolves them here), ld.so and the vDSO aside. */
export function neededLibraries(path: string): string[] {
  let out: string;
  try {
    out = execFileSync('ldd', [path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    // Static, a script, or no ldd here: nothing to look for on the hosts.
    return [];
  }
  return parseLdd(out).map((l) => l.name);
}

/** `ldd`'s lines as (soname, resolved path or undefined when not found); ld.so and the vDSO aside. */
export function parseLdd(out: string): { name: string; path: string | undefined }[] {
  const found: { name: string; path: string | undefined }[] = [];
  for (const line of out.split('\n')) {
    const match = /^\s*(\S+)\s+=>\s+(not found|(\S+))/.exec(line);
    if (!match) continue;
    found.push({ name: match[1], path: match[2] === 'not found' ? undefined : match[3] });
  }
  return found;
}

/**
 * The libraries of `needed` the host's dynamic loader does not know (`ldconfig -p` there), or
 * undefined when the host cannot say (no ldconfig).
 */
export async function librariesMissingOn(
  host: ProgramHost,
  needed: readonly string[],
): Promise<string[] | undefined> {
  if (needed.length === 0) return [];
  const result = await host.exec(['sh', '-c', 'ldconfig -p 2>/dev/null || /sbin/ldconfig -p'], {
    timeoutMs: 30_000,
  });
  if (result.code !== 0) return undefined;
  const known = new Set(
    result.stdout
      .split('\n')
      .map((l) => /^\s*(\S+)\s+\(/.exec(l)?.[1])
      .filter((n): n is string => n !== undefined),
  );
  return needed.filter((n) => !known.has(n));
}

/**
 * The libraries a program already on the host lacks there (`ldd` on the host says "not found"):
 * `command` a path or a name in the host's PATH. Nothing when the host has no ldd or the program
 * is static or a script.
 */
export async function librariesUnresolvedOn(host: ProgramHost, command: string): Promise<string[]> {
  const script = command.includes('/')
    ? 'ldd "$1" 2>/dev/null'
    : 'p=$(command -v "$1") && ldd "$p" 2>/dev/null';
  const result = await host.exec(['sh', '-c', script, 'sh', command], { timeoutMs: 30_000 });
  return parseLdd(result.stdout)
    .filter((l) => l.path === undefined)
    .map((l) => l.name);
}

/**
 * The Debian packages this machine has the libraries from (`dpkg -S` on their paths here), for
 * the fix of a host that lacks them; empty when this machine cannot say.
 */
export function packagesOf(libraries: readonly string[]): string[] {
  let known: string;
  try {
    known = execFileSync('ldconfig', ['-p'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [];
  }
  const paths = libraries.flatMap((name) => {
    const match = new RegExp(`^\\s*${name.replace(/[.+]/g, '\\$&')}\\s+\\(.*\\)\\s+=>\\s+(\\S+)`, 'm').exec(
      known,
    );
    if (!match) return [];
    try {
      // dpkg knows a file by its real path (/usr/lib/…, not /lib/… through merged /usr's link).
      return [realpathSync(match[1])];
    } catch {
      return [];
    }
  });
  if (paths.length === 0) return [];
  let owners: string;
  try {
    owners = execFileSync('dpkg', ['-S', ...paths], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (error) {
    // dpkg exits 1 when one path has no package; what it found is still on stdout.
    const stdout = (error as { stdout?: unknown }).stdout;
    owners = typeof stdout === 'string' ? stdout : '';
  }
  const packages = owners
    .split('\n')
    .map((l) => l.split(':')[0].trim())
    .filter((p) => p !== '');
  return [...new Set(packages)];
}

/** What a host lacks for a node's program, and what to do. */
export interface ProgramProblem {
  readonly what: string;
  readonly fix: string;
}

/** A host that lacks libraries a node's program loads: which, and the packages to install. */
export function missingLibraries(node: string, command: string, missing: readonly string[]): ProgramProblem {
  const packages = packagesOf(missing);
  return {
    what: `${node}'s program ${command} needs shared libraries the host lacks (${missing.join(', ')})`,
    fix:
      packages.length > 0
        ? `install them there (Debian: apt-get install -y ${packages.join(' ')})`
        : 'install them there',
  };
}

/**
 * Whether the shared libraries the node's program loads are on its host: for one installed there
 * (its command found there first), `ldd` on the host; for one built here (`built`, copied to the
 * host at start, and built already), the libraries it loads here looked up in the host's
 * `ldconfig -p`, or `ldd` on the host when the host has the same file at the same path already.
 */
export async function libraryProblem(
  host: ProgramHost,
  node: string,
  spec: { readonly command: string; readonly built?: boolean },
): Promise<ProgramProblem | undefined> {
  let missing: readonly string[] | undefined;
  if (spec.built === true) {
    missing = (await hostHasSame(host, spec.command))
      ? await librariesUnresolvedOn(host, spec.command)
      : await librariesMissingOn(host, neededLibraries(spec.command));
  } else {
    missing = await librariesUnresolvedOn(host, spec.command);
  }
  return missing !== undefined && missing.length > 0
    ? missingLibraries(node, spec.command, missing)
    : undefined;
}
