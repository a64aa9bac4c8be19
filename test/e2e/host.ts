import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * The host's state as a run can change it — processes, namespaces, links, routes, iptables,
 * /dev/shm, FUSE mounts, temp dirs — to prove a run (or `mallory cleanup` after it) left it as it was.
 */
function lines(argv: readonly string[]): string[] {
  try {
    return execFileSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .split('\n')
      .filter((l) => l.trim() !== '');
  } catch {
    return [];
  }
}

function parentOf(pid: string): { ppid: string; zombie: boolean } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: fields[1], zombie: fields[0] === 'Z' };
  } catch {
    return undefined;
  }
}

/** Live processes that are not this test's own descendants. */
function foreignProcesses(): Map<string, string> {
  const mine = String(process.pid);
  const result = new Map<string, string>();
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    let p = pid;
    let ours = false;
    for (let depth = 0; depth < 64 && p !== '0' && p !== '1'; depth++) {
      if (p === mine) {
        ours = true;
        break;
      }
      const parent = parentOf(p);
      if (parent === undefined) break;
      p = parent.ppid;
    }
    const info = parentOf(pid);
    // Kernel threads (children of kthreadd, PID 2) come and go on their own.
    if (ours || info === undefined || info.zombie || info.ppid === '2' || pid === '2') continue;
    try {
      result.set(pid, readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim());
    } catch {
      // exited meanwhile
    }
  }
  return result;
}

/**
 * Whether a new process hangs off init through new processes only: what a dead parent leaves
 * (the run's detached nodes are re-parented to init when the fuzzer dies). A process started by
 * something that was already running (a shell, a service) is someone else's.
 */
function orphanedSince(pid: string, before: ReadonlySet<string>): boolean {
  let p = pid;
  for (let depth = 0; depth < 64; depth++) {
    const parent = parentOf(p);
    if (parent === undefined) return false;
    if (parent.ppid === '1' || parent.ppid === '0') return true;
    if (before.has(parent.ppid)) return false;
    p = parent.ppid;
  }
  return false;
}

/** FUSE mounts (the disk layer's), as /proc/self/mounts lists them. */
function fuseMounts(): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .filter((l) => /^\S+ \S+ fuse(\.\S+)? /.test(l));
}

export interface HostSnapshot {
  readonly pids: ReadonlySet<string>;
  readonly state: Record<string, readonly string[]>;
}

export function snapshot(): HostSnapshot {
  return {
    pids: new Set(foreignProcesses().keys()),
    state: {
      namespaces: lines(['ip', 'netns', 'list']).map((l) => l.split(' ')[0]),
      links: lines(['ip', '-o', 'link', 'show']).map((l) => l.split(':')[1].trim().split('@')[0]),
      routes: lines(['ip', '-4', 'route', 'show', 'table', 'all']),
      iptables: lines(['iptables-save'])
        .filter((l) => !l.startsWith('#'))
        .map((l) => l.replace(/\[\d+:\d+\]/, '')),
      shm: readdirSync('/dev/shm'),
      mounts: fuseMounts(),
      tmp: readdirSync(tmpdir()),
    },
  };
}

/** What is on the host now and was not before (processes: new ones that are not ours). */
export function leftovers(before: HostSnapshot): string[] {
  const now = snapshot();
  const left: string[] = [];
  for (const [kind, items] of Object.entries(now.state)) {
    const had = new Set(before.state[kind]);
    for (const item of items) if (!had.has(item)) left.push(`${kind}: ${item}`);
    const has = new Set(items);
    for (const item of before.state[kind]) if (!has.has(item)) left.push(`${kind} gone: ${item}`);
  }
  for (const [pid, cmd] of foreignProcesses()) {
    if (!before.pids.has(pid) && orphanedSince(pid, before.pids)) left.push(`process ${pid}: ${cmd}`);
  }
  return left;
}

const SETTLE_MS = 3000;

/** Leftovers, asked again for a moment: a process being reaped may still show for a few ms. */
export async function settledLeftovers(before: HostSnapshot): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const left = leftovers(before);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}
