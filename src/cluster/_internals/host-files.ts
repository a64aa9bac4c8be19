import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** A file or dir as it is now: changed when its stamp differs. */
type Stamp = string;

/** What a node's host needs of the files written here: dirs to make and files to copy (absolute paths, the same on both). */
export interface HostUpload {
  readonly dirs: readonly string[];
  readonly files: readonly string[];
}

/** Every dir and regular file under `root` (absolute path → stamp); nothing when it is missing. */
function scan(root: string): Map<string, Stamp> {
  const found = new Map<string, Stamp>();
  const walk = (dir: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry);
      let stat;
      try {
        stat = lstatSync(path);
      } catch {
        continue;
      }
      if (stat.isDirectory()) {
        found.set(path, 'dir');
        walk(path);
      } else if (stat.isFile()) {
        found.set(path, `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}`);
      }
    }
  };
  walk(root);
  return found;
}

/**
 * The files a system's `prepare` and `launch` write on this machine for nodes that run on other
 * hosts. Those calls see the run's dir on the hosts (`root`) and write under the same path here;
 * what they create or change there during a call is owed to a host and copied to it before the
 * node starts: a file under `<root>/<node>/` or `<root>/nodes/<node>/` to that node's host, any
 * other file under `root` (a config the nodes share) to every host. A file the call left alone is
 * not copied again, so what a node rewrote on its host (Redis's CONFIG REWRITE) stays.
 */
export class HostFiles {
  /** Node → path → the stamp it had when it became owed to the node's host. */
  private readonly owed = new Map<string, Map<string, Stamp>>();

  constructor(
    private readonly root: string,
    private readonly nodes: readonly string[],
  ) {
    for (const node of nodes) this.owed.set(node, new Map());
  }

  /** Runs a call of the system's (`prepare`, `launch`), owing what it wrote under the root to the hosts. */
  async track<T>(call: () => T | Promise<T>): Promise<T> {
    const before = scan(this.root);
    const result = await call();
    for (const [path, stamp] of scan(this.root)) {
      if (before.get(path) === stamp) continue;
      const owner = this.ownerOf(path);
      for (const node of owner === undefined ? this.nodes : [owner]) this.owed.get(node)?.set(path, stamp);
    }
    return result;
  }

  /** What the node's host is owed, no longer owed once taken: dirs parents first. */
  take(node: string): HostUpload {
    const owed = this.owed.get(node);
    if (!owed) return { dirs: [], files: [] };
    const entries = [...owed.entries()].sort(([a], [b]) => a.localeCompare(b));
    owed.clear();
    return {
      dirs: entries.filter(([, s]) => s === 'dir').map(([p]) => p),
      files: entries.filter(([, s]) => s !== 'dir').map(([p]) => p),
    };
  }

  /**
   * The node's data dir was wiped on its host: what was written for it here goes too (a system
   * that writes its config once, when it is missing, writes it again for the wiped node).
   */
  wiped(node: string, dataDir: string): void {
    let entries: string[] = [];
    try {
      entries = readdirSync(dataDir);
    } catch {
      // never written here
    }
    for (const entry of entries) rmSync(join(dataDir, entry), { recursive: true, force: true });
    const owed = this.owed.get(node);
    for (const path of owed?.keys() ?? []) {
      if (path.startsWith(dataDir + sep)) owed?.delete(path);
    }
  }

  private ownerOf(path: string): string | undefined {
    const parts = relative(this.root, path).split(sep);
    if (this.nodes.includes(parts[0])) return parts[0];
    if (parts[0] === 'nodes' && parts.length > 1 && this.nodes.includes(parts[1])) return parts[1];
    return undefined;
  }
}
