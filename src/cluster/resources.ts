import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { crashPoint } from '../core/crash-point.js';
import { HarnessError, UsageError } from '../core/errors.js';
import { errorCode, makeDirs } from '../core/fs.js';

/** Something a run created that must be removed when it ends, on Ctrl-C, or by `mallory cleanup`. */
export type Resource =
  | { readonly kind: 'process'; readonly pid: number; readonly startTime: string; readonly label: string }
  | { readonly kind: 'dir'; readonly path: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'netns'; readonly name: string }
  /** A file system mounted at `path` (the FUSE disk layer), undone by a lazy unmount. */
  | { readonly kind: 'mount'; readonly path: string }
  /** Undone by running `undo` (argv) — e.g. `iptables -D …` for an inserted rule, `ip link del X`. */
  | { readonly kind: 'command'; readonly undo: readonly string[]; readonly label: string }
  /** On another host: undone by running the shell text `undo` there as root, over SSH. */
  | {
      readonly kind: 'remote';
      readonly target: RemoteTarget;
      readonly undo: string;
      readonly label: string;
    };

/** How `mallory cleanup` reaches a host again: the fields of `SshTarget` (no secret: a key's path). */
export interface RemoteTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly privateKey?: string | undefined;
  readonly knownHosts: string;
  readonly strictHostKeyChecking: 'yes' | 'accept-new' | 'no';
}

type Line =
  | { readonly t: 'owner'; readonly pid: number; readonly startTime: string; readonly runDir?: string }
  | { readonly t: 'run-dir'; readonly runDir: string }
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

const REGISTRY_SUFFIX = '.jsonl';
/** A registry being born: `<runId>.jsonl.<pid>.tmp`, renamed into place once its owner line is on disk. */
const BIRTH_SUFFIX = /\.jsonl\.(\d+)\.tmp$/;

function appendDurably(file: string, line: Line): void {
  const fd = openSync(file, 'a');
  try {
    appendFileSync(fd, JSON.stringify(line) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The resources of one run, appended (and fsynced) to a registry file *before* each is created, so
 * a fuzzer killed at any moment leaves a complete list for `mallory cleanup` (removing something
 * that was never created is harmless). The file appears atomically with its owner line, so a
 * cleanup running beside a starting run never mistakes it for a dead one.
 */
export class ResourceRegistry {
  private nextId = 1;
  private readonly live = new Map<number, Resource>();
  readonly file: string;

  constructor(runId: string, runDir?: string) {
    const dir = registryDir();
    makeDirs(dir, 'MALLORY_STATE_DIR');
    this.file = join(dir, `${runId}${REGISTRY_SUFFIX}`);
    const birth = `${this.file}.${process.pid}.tmp`;
    const owner: Line = {
      t: 'owner',
      pid: process.pid,
      startTime: processStartTime(process.pid) ?? '',
      ...(runDir !== undefined ? { runDir } : {}),
    };
    try {
      appendDurably(birth, owner);
      renameSync(birth, this.file);
    } catch (error) {
      rmSync(birth, { force: true });
      throw new UsageError(
        'bad-state-dir',
        `MALLORY_STATE_DIR ${dir}: cannot write the run's registry (${errorCode(error)}): point it at a writable directory`,
      );
    }
    try {
      crashPoint('registry created');
    } catch (error) {
      this.removeFile();
      throw error;
    }
  }

  /** Names the run directory this registry belongs to, so `cleanup` can mark that run incomplete. */
  setRunDir(runDir: string): void {
    this.append({ t: 'run-dir', runDir });
  }

  /** Records a resource; call it *before* creating the resource. */
  record(resource: Resource): number {
    const id = this.nextId++;
    this.live.set(id, resource);
    try {
      this.append({ t: 'add', id, resource });
    } catch (error) {
      throw new HarnessError(
        `cannot record ${describeResource(resource)} in the run's registry (${errorCode(error)})`,
        { cause: error },
      );
    }
    crashPoint(`record ${describeResource(resource)}`);
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

  /** Removes everything still recorded, newest first; the registry file stays until `removeFile`. */
  releaseResources(): void {
    const ids = [...this.live.keys()].sort((a, b) => b - a);
    for (const id of ids) this.release(id);
  }

  /** Deletes the registry file: call it once the run's final status is on disk. */
  removeFile(): void {
    rmSync(this.file, { force: true });
  }

  /** Removes everything still recorded, then the registry file itself. */
  releaseAll(): void {
    this.releaseResources();
    this.removeFile();
  }

  private append(line: Line): void {
    appendDurably(this.file, line);
  }
}

const KILL_WAIT_MS = 2000;
/** How long one remote undo may take (connect and run), before it is given up on. */
const REMOTE_UNDO_TIMEOUT_MS = 30_000;

/** The program that undoes a remote resource over SSH, next to this file in dist/ (or in dist/ from src/). */
function remoteUndoProgram(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, 'runtime', 'remote-undo.js');
  if (existsSync(beside)) return beside;
  return resolve(here, '../../dist/cluster/runtime/remote-undo.js');
}

/**
 * Runs a remote resource's undo on its host, synchronously as every removal here is: a short-lived
 * process connects over SSH (the same checks of the host key) and runs it.
 */
function undoRemotely(resource: Extract<Resource, { kind: 'remote' }>): void {
  spawnSync(process.execPath, [remoteUndoProgram(), JSON.stringify(resource)], {
    stdio: 'ignore',
    timeout: REMOTE_UNDO_TIMEOUT_MS,
  });
}

/** One line naming a resource, for `mallory cleanup`'s report. */
export function describeResource(resource: Resource): string {
  switch (resource.kind) {
    case 'process':
      return `process ${resource.pid} (${resource.label})`;
    case 'dir':
      return `dir ${resource.path}`;
    case 'file':
      return `file ${resource.path}`;
    case 'netns':
      return `netns ${resource.name}`;
    case 'mount':
      return `mount ${resource.path}`;
    case 'command':
    case 'remote':
      return resource.label;
  }
}

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
      case 'file':
        rmSync(resource.path, { force: true });
        break;
      case 'netns':
        execFileSync('ip', ['netns', 'delete', resource.name], { stdio: 'ignore' });
        break;
      case 'mount':
        unmountLazily(resource.path);
        break;
      case 'command':
        execFileSync(resource.undo[0], resource.undo.slice(1), { stdio: 'ignore' });
        break;
      case 'remote':
        undoRemotely(resource);
        break;
    }
  } catch {
    // Already gone, never created (recorded before creation), or not ours to remove any more.
  }
  crashPoint(`remove ${describeResource(resource)}`, false);
}

/** The mount points of this process's mount namespace (`/proc/self/mounts`, octal escapes decoded). */
export function mountPoints(): string[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) =>
      l.split(' ')[1].replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8))),
    );
}

/**
 * Detaches the file system mounted at `path`, if one is: lazily, so a mount whose FUSE server is
 * dead or whose files are still open goes too (`fusermount3 -u -z`, else `umount -l`).
 */
export function unmountLazily(path: string): void {
  if (!mountPoints().includes(path)) return;
  try {
    execFileSync('fusermount3', ['-u', '-z', path], { stdio: 'ignore' });
  } catch {
    execFileSync('umount', ['-l', path], { stdio: 'ignore' });
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

/** What `mallory cleanup` found of one run whose fuzzer is gone. */
export interface LeftoverRun {
  readonly registry: string;
  readonly ownerPid: number | undefined;
  readonly runDir: string | undefined;
  /** Newest first, the order they are removed in. */
  readonly resources: readonly string[];
}

export interface CleanupReport {
  readonly runs: readonly LeftoverRun[];
  /**
   * Registries left alone because whether their run is live cannot be told (no owner line: a
   * file cut short or edited); `force` removes them too.
   */
  readonly unknown: readonly string[];
  readonly removed: number;
  /** The run dirs of the runs cleaned (to mark them incomplete). */
  readonly runDirs: readonly string[];
}

function readLines(file: string): Line[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l): Line[] => {
      try {
        return [JSON.parse(l) as Line];
      } catch {
        return []; // a line cut short by a crash
      }
    });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes what crashed runs left behind: every registry whose owner process is gone (or every
 * registry, with `force`). With `dryRun` it only reports what it would remove.
 */
export interface CleanupOptions {
  readonly force?: boolean;
  readonly dryRun?: boolean;
  /** Told of each run left behind as it is found, before anything of it is removed. */
  readonly onRun?: (run: LeftoverRun) => void;
  /** Told of each resource once its removal was tried (one over SSH may take seconds). */
  readonly onRemoved?: (resource: string) => void;
}

export function cleanupRegistries(options: CleanupOptions = {}): CleanupReport {
  const runs: LeftoverRun[] = [];
  const runDirs: string[] = [];
  const unknown: string[] = [];
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(registryDir());
  } catch {
    return { runs, unknown, removed, runDirs };
  }
  for (const name of names) {
    const file = join(registryDir(), name);
    const birth = BIRTH_SUFFIX.exec(name);
    // A registry whose creator died before renaming it into place holds an owner line only.
    if (birth !== null) {
      if (!pidAlive(Number(birth[1])) && !options.dryRun) rmSync(file, { force: true });
      continue;
    }
    if (!name.endsWith(REGISTRY_SUFFIX)) continue;
    const lines = readLines(file);
    const owner = lines.find((l) => l.t === 'owner');
    if (owner && !options.force && isSameProcess(owner.pid, owner.startTime)) continue;
    // Without its owner line nothing says the run is over: never kill what may be live.
    if (!owner && !options.force) {
      unknown.push(file);
      continue;
    }
    const live = new Map<number, Resource>();
    let runDir = owner?.runDir;
    for (const line of lines) {
      if (line.t === 'add') live.set(line.id, line.resource);
      else if (line.t === 'release') live.delete(line.id);
      else if (line.t === 'run-dir') runDir = line.runDir;
    }
    const entries = [...live.entries()].sort((a, b) => b[0] - a[0]).map(([, resource]) => resource);
    const run: LeftoverRun = {
      registry: file,
      ownerPid: owner?.pid,
      runDir,
      resources: entries.map(describeResource),
    };
    runs.push(run);
    if (runDir !== undefined) runDirs.push(runDir);
    options.onRun?.(run);
    if (options.dryRun) continue;
    for (const resource of entries) {
      removeResource(resource);
      removed++;
      options.onRemoved?.(describeResource(resource));
    }
    rmSync(file, { force: true });
  }
  return { runs, unknown, removed, runDirs };
}
