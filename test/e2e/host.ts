import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { NAMESPACE_PREFIX, ROOT_VETH_PREFIX, shortId } from '../../src/cluster/net/netns.js';
import { candidateSubnets } from '../../src/cluster/net/_internals/subnet.js';
import type { Sandbox } from './helpers.js';

/**
 * The host's state as a run can change it — processes, namespaces, links, routes, iptables,
 * /dev/shm, FUSE mounts, temp dirs — to prove a run (or `mallory cleanup` after it) left it as it
 * was. Only what a test's own runs made counts: other tests run beside it.
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

/**
 * What marks a sandbox's runs: every resource a run makes is named by its id (data and temp dirs,
 * mounts under them) or by the id's hash (namespaces `mallory-<hash>-…`, the root veth
 * `mlr<hash>`, its /24 among the id's candidate subnets), and every process it starts inherits the
 * sandbox's `MALLORY_STATE_DIR`. Other tests on the host — or other sessions — make their own.
 */
interface RunMarks {
  /** Substrings that only this sandbox's runs' resources carry. */
  readonly names: readonly string[];
  /** `10.a.b.` prefixes of the subnets the runs may have taken. */
  readonly subnets: readonly string[];
  /** The sandbox's registry dir, in the environment of every process its runs started. */
  readonly stateEnv: string;
}

/** The ids of the runs stored under `store` (`<store>/<system>/<run>/run.db`). */
function runIds(store: string): string[] {
  if (!existsSync(store)) return [];
  const ids: string[] = [];
  for (const system of readdirSync(store, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const run of readdirSync(join(store, system.name))) {
      const db = join(store, system.name, run, 'run.db');
      if (!existsSync(db)) continue;
      const conn = new Database(db, { readonly: true, fileMustExist: true });
      try {
        const row = conn.prepare('SELECT id FROM run').get() as { id: string } | undefined;
        if (row) ids.push(row.id);
      } catch {
        // killed before its run row was written: it made nothing yet
      } finally {
        conn.close();
      }
    }
  }
  return ids;
}

/** How many of a run's candidate subnets to recognise (a run takes a later one only when earlier ones are in use). */
const SUBNET_CANDIDATES = 16;

function marksOf(box: Sandbox): RunMarks {
  const ids = runIds(box.store);
  const hashes = ids.map(shortId);
  return {
    names: [
      ...ids,
      ...hashes.map((h) => `${NAMESPACE_PREFIX}${h}-`),
      ...hashes.map((h) => `${ROOT_VETH_PREFIX}${h}`),
    ],
    subnets: ids.flatMap((id) => candidateSubnets(id, SUBNET_CANDIDATES).map((s) => `${s.base}.`)),
    stateEnv: `MALLORY_STATE_DIR=${box.state}`,
  };
}

function marked(item: string, marks: RunMarks, foreign: ReadonlySet<string> = new Set()): boolean {
  if (marks.names.some((name) => item.includes(name))) return true;
  return marks.subnets.some(
    (base) => !foreign.has(base) && new RegExp(`(^|[^0-9.])${base.replace(/\./g, '\\.')}`).test(item),
  );
}

/**
 * The `10.a.b.` prefixes of subnets another run holds now: routed through a root veth that is not
 * one of the sandbox's runs'. A subnet is one run's at a time, so its routes (the guard route has
 * no device to tell by) are that run's even when the subnet is also among our runs' candidates: a
 * run in a file beside this one once took a candidate of ours and its live routes were counted as
 * our leftovers.
 */
function foreignSubnets(routes: readonly string[], marks: RunMarks): Set<string> {
  const held = new Set<string>();
  for (const route of routes) {
    const m = /^(10\.\d+\.\d+\.)0\/24 dev (mlr[0-9a-f]{6})\b/.exec(route);
    if (m && !marks.names.includes(m[2])) held.add(m[1]);
  }
  return held;
}

function environOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return '';
  }
}

/** Host network state that no run may remove (another run's own names come and go with it). */
const KEPT_KINDS = new Set(['links', 'routes', 'iptables']);
/**
 * What any Mallory run's resources look like, whoever made them; a containers run's docker
 * network is a bridge `br-<id>` with the containers' `veth…` links (the tests' dockerd makes no
 * other: it runs with `--bridge=none`).
 */
const ANY_RUN = /mallory-|mlr[0-9a-f]{6}|metric 4242|\bbr-[0-9a-f]{12}\b|^veth[0-9a-f]{7}$/;

/**
 * What the sandbox's runs left on the host since `before`: new processes, namespaces, links,
 * routes, rules, /dev/shm entries, FUSE mounts and temp dirs that carry the marks of its runs; and
 * host network state (links, routes, rules) that is gone and was no run's. Anything else that came
 * or went belongs to someone else on the host, so tests can run side by side.
 */
export function leftovers(before: HostSnapshot, box: Sandbox): string[] {
  const marks = marksOf(box);
  const now = snapshot();
  const foreign = foreignSubnets(now.state.routes ?? [], marks);
  const left: string[] = [];
  for (const [kind, items] of Object.entries(now.state)) {
    const had = new Set(before.state[kind]);
    for (const item of items)
      if (!had.has(item) && marked(item, marks, foreign)) left.push(`${kind}: ${item}`);
    if (!KEPT_KINDS.has(kind)) continue;
    const has = new Set(items);
    for (const item of before.state[kind]) {
      if (!has.has(item) && !ANY_RUN.test(item)) left.push(`${kind} gone: ${item}`);
    }
  }
  for (const [pid, cmd] of foreignProcesses()) {
    if (before.pids.has(pid) || !orphanedSince(pid, before.pids)) continue;
    const ours = marked(cmd, marks) || environOf(pid).split('\0').includes(marks.stateEnv);
    if (ours) left.push(`process ${pid}: ${cmd}`);
  }
  return left;
}

const SETTLE_MS = 3000;

/** Leftovers, asked again for a moment: a process being reaped may still show for a few ms. */
export async function settledLeftovers(before: HostSnapshot, box: Sandbox): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const left = leftovers(before, box);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}
