import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Something a run created that must be removed when it ends, on Ctrl-C, or by `mallory cleanup`. */
export type Resource =
  | { readonly kind: 'process'; readonly pid: number; readonly startTime: string; readonly label: string }
  | { readonly kind: 'dir'; readonly path: string }
  | { readonly kind: 'netns'; readonly name: string }
  /** Undone by running `undo` (argv) — e.g. `iptables -D …` for an inserted rule, `ip link del X`. */
  | { readonly kind: 'command'; readonly undo: readonly string[]; readonly label: string };

interface Entry {
  readonly id: number;
  readonly resource: Resource;
}

type Line =
  | { readonly t: 'owner'; readonly pid: number; readonly startTime: string; readonly runDir: string }
  | { readonly t: 'add'; readonly id: number; readonly resource: Resource }
  | { readonly t: 'release'; readonly id: number };

/** Where every run records what it creates; `mallory cleanup` reads it after a crash. */
export function registryDir(): string {
  return process.env.MALLORY_STATE_DIR ?? join(tmpdir(), 'mallory-state');
}

/** The kernel's start time of a process (field 22 of /proc/PID/stat), so a reused PID is never killed. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

function isSameProcess(pid: number, startTime: string): boolean {
  return processStartTime(pid) === startTime;
}

/**
 * The resources of one run, appended (and fsynced) to a registry file as they are created, so a
 * fuzzer killed at any moment leaves a complete list for `mallory cleanup`.
 */
export class ResourceRegistry {
  private nextId = 1;
  private readonly live = new Map<number, Resource>();
  readonly file: string;

  constructor(runId: string, runDir: string) {
    mkdirSync(registryDir(), { recursive: true });
    this.file = join(registryDir(), `${runId}.jsonl`);
    this.append({ t: 'owner', pid: process.pid, startTime: processStartTime(process.pid) ?? '', runDir });
  }

  record(resource: Resource): number {
    const id = this.nextId++;
    this.live.set(id, resource);
    this.append({ t: 'add', id, resource });
    return id;
  }

  /** Removes the resource now and forgets it. */
  release(id: number): void {
    const resource = this.live.get(id);
    if (!resource) return;
    removeResource(resource);
    this.forget(id);
  }

  /** Forgets a resource that is already gone (e.g. a process that exited by itself). */
  forget(id: number): void {
    if (!this.live.delete(id)) return;
    this.append({ t: 'release', id });
  }

  /** Removes everything still recorded, newest first, then the registry file itself. */
  releaseAll(): void {
    const ids = [...this.live.keys()].sort((a, b) => b - a);
    for (const id of ids) this.release(id);
    rmSync(this.file, { force: true });
  }

  private append(line: Line): void {
    const fd = openSync(this.file, 'a');
    try {
      appendFileSync(fd, JSON.stringify(line) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

const KILL_WAIT_MS = 2000;

/** Best effort removal of one resource; never throws. */
export function removeResource(resource: Resource): void {
  try {
    switch (resource.kind) {
      case 'process':
        killProcessGroup(resource.pid, resource.startTime);
        break;
      case 'dir':
        rmSync(resource.path, { recursive: true, force: true });
        break;
      case 'netns':
        execFileSync('ip', ['netns', 'delete', resource.name], { stdio: 'ignore' });
        break;
      case 'command':
        execFileSync(resource.undo[0], resource.undo.slice(1), { stdio: 'ignore' });
        break;
    }
  } catch {
    // Already gone, or not ours to remove any more.
  }
}

/** SIGKILLs the process group led by `pid`, if `pid` is still the process we started; waits for it. */
export function killProcessGroup(pid: number, startTime: string): void {
  if (!isSameProcess(pid, startTime)) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
  }
  const deadline = Date.now() + KILL_WAIT_MS;
  while (Date.now() < deadline && isSameProcess(pid, startTime) && !isZombie(pid)) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

export interface CleanupReport {
  readonly runs: number;
  readonly removed: number;
  readonly runDirs: readonly string[];
}

/**
 * Removes what crashed runs left behind: every registry whose owner process is gone (or every
 * registry, with `force`). Returns the run dirs of the runs it cleaned (to mark them incomplete).
 */
export function cleanupRegistries(options: { force?: boolean } = {}): CleanupReport {
  let runs = 0;
  let removed = 0;
  const runDirs: string[] = [];
  let files: string[];
  try {
    files = readdirSync(registryDir()).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return { runs, removed, runDirs };
  }
  for (const name of files) {
    const file = join(registryDir(), name);
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .flatMap((l): Line[] => {
        try {
          return [JSON.parse(l) as Line];
        } catch {
          return []; // a line cut short by a crash
        }
      });
    const owner = lines.find((l) => l.t === 'owner');
    if (owner && owner.t === 'owner' && !options.force && isSameProcess(owner.pid, owner.startTime)) continue;
    const live = new Map<number, Resource>();
    for (const line of lines) {
      if (line.t === 'add') live.set(line.id, line.resource);
      else if (line.t === 'release') live.delete(line.id);
    }
    const entries: Entry[] = [...live.entries()].map(([id, resource]) => ({ id, resource }));
    for (const entry of entries.sort((a, b) => b.id - a.id)) {
      removeResource(entry.resource);
      removed++;
    }
    rmSync(file, { force: true });
    runs++;
    if (owner && owner.t === 'owner') runDirs.push(owner.runDir);
  }
  return { runs, removed, runDirs };
}
