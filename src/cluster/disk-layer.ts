import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { sleep } from '../core/clock.js';
import { HarnessError, UsageError } from '../core/errors.js';
import { cacheDir } from '../core/fs.js';
import { processStartTime, type ResourceRegistry } from './resources.js';
import { localRuntime } from './runtime/local.js';
import type { NodeRuntime } from './runtime/runtime.js';
import { signalGroup } from './_internals/signal-group.js';

/** The Debian packages the disk layer needs, as the fix printed when one is missing. */
export const DISK_LAYER_FIX = 'apt-get install -y gcc libfuse3-dev fuse3 pkg-config';
const SOURCE_NAME = 'disk-layer.c';
const BINARY_NAME = 'mallory-disk';
const BUILD_TIMEOUT_MS = 120_000;
const MOUNT_TIMEOUT_MS = 10_000;
const MOUNT_POLL_MS = 50;
/** A drop walks the node's whole data dir. */
const COMMAND_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

/** The layer's C source: beside this module in src/, or in src/ when this runs from dist/. */
export function diskLayerSource(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, '_internals', SOURCE_NAME);
  if (existsSync(beside)) return beside;
  return resolve(here, '../../src/cluster/_internals', SOURCE_NAME);
}

function run(command: string, args: readonly string[], cwd?: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      command,
      args,
      { timeout: BUILD_TIMEOUT_MS, ...(cwd ? { cwd } : {}) },
      (error, stdout, stderr) => {
        if (error) reject(new Error(stderr.trim() || error.message));
        else resolvePromise(stdout);
      },
    );
  });
}

/**
 * The shell text that prints what building and mounting the layer needs and a host lacks, one
 * word each (`/dev/fuse`, `gcc`, `pkg-config`, `fusermount3`, `libfuse3`).
 */
const NEEDS_SCRIPT = [
  '[ -e /dev/fuse ] || echo /dev/fuse',
  'for c in gcc pkg-config fusermount3; do command -v "$c" >/dev/null 2>&1 || echo "$c"; done',
  'if command -v pkg-config >/dev/null 2>&1; then pkg-config --exists fuse3 || echo libfuse3; fi',
].join('; ');

/** What building and mounting the disk layer needs and the runtime's host lacks (empty: it can). */
export async function diskLayerNeedsOn(runtime: NodeRuntime): Promise<string[]> {
  const result = await runtime.exec(['/bin/sh', '-c', NEEDS_SCRIPT]);
  if (result.code !== 0) {
    throw new HarnessError(
      `host ${runtime.host}: cannot ask what the disk layer needs: ${result.stderr.trim()}`,
    );
  }
  return result.stdout.split('\n').filter((w) => w.trim() !== '');
}

/**
 * What building and mounting the layer needs and this machine lacks (`diskLayerNeedsOn` here),
 * and the compiler flags for libfuse3 when nothing is.
 */
export async function diskLayerNeeds(): Promise<{ missing: string[]; flags: string[] }> {
  const missing = await diskLayerNeedsOn(localRuntime());
  if (missing.length > 0) return { missing, flags: [] };
  const flags = (await run('pkg-config', ['--cflags', '--libs', 'fuse3'])).trim().split(/\s+/);
  return { missing, flags };
}

/**
 * Builds the FUSE layer (`mallory-disk`) from its C source if this source version is not built
 * yet, into the cache dir; returns the binary's path. Throws a `UsageError` naming the Debian
 * packages when FUSE, gcc or libfuse3 is missing.
 */
export async function buildDiskLayer(): Promise<string> {
  const { missing, flags } = await diskLayerNeeds();
  if (missing.includes('/dev/fuse')) {
    throw new UsageError(
      'missing-binary',
      'disk faults need FUSE and /dev/fuse is missing: load the module (modprobe fuse) or run where /dev/fuse exists',
    );
  }
  if (missing.length > 0) {
    throw new UsageError(
      'missing-binary',
      `disk faults need gcc, libfuse3 and fusermount3 (missing: ${missing.join(', ')}): run ${DISK_LAYER_FIX}`,
    );
  }
  const sourceFile = diskLayerSource();
  const source = readFileSync(sourceFile);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const dir = join(cacheDir(), `disk-layer-${hash}`);
  const binary = join(dir, BINARY_NAME);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  try {
    await run('gcc', ['-O2', '-Wall', '-o', partial, sourceFile, ...flags]);
  } catch (error) {
    throw new UsageError(
      'missing-binary',
      `cannot build the disk layer from ${sourceFile} (${DISK_LAYER_FIX}): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  renameSync(partial, binary);
  return binary;
}

/** Sends one command line to a layer's control socket; resolves with its one-line answer. */
function ask(socket: string, line: string, timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const conn = createConnection(socket);
    let buffer = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no answer to "${line}" within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${line}\n`));
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      conn.end();
      resolvePromise(buffer.slice(0, end));
    });
    conn.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    conn.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`the layer closed the connection without answering "${line}"`));
    });
  });
}

interface Mount {
  readonly mountpoint: string;
  readonly socket: string;
  readonly log: string;
  readonly child: ChildProcess;
  readonly mountId: number;
  readonly processId: number;
  readonly exited: Promise<void>;
  stopping: boolean;
  exit?: string;
}

/**
 * The FUSE disk layers of one run: one `mallory-disk` process per node, mounted over the node's
 * data dir with the files kept in a sibling dir (`<data dir>.disk`), taking commands on a unix
 * socket beside it (`<data dir>.sock`). Each mount is in the run's registry before it is made,
 * and each layer process as soon as it has a PID, so `mallory cleanup` undoes both.
 */
export class DiskLayer {
  private readonly mounts = new Map<string, Mount>();

  constructor(
    private readonly binary: string,
    private readonly registry: ResourceRegistry,
  ) {}

  isMounted(node: string): boolean {
    return this.mounts.has(node);
  }

  /**
   * Mounts the layer over `mountpoint` (once per node and run) and waits until it answers. What the
   * dir already holds moves under the layer first. The layer's output goes to `<logDir>/disk.log`.
   */
  async mount(node: string, mountpoint: string, logDir: string): Promise<void> {
    const known = this.mounts.get(node);
    if (known) {
      this.check(node, known);
      return;
    }
    const backing = `${mountpoint}.disk`;
    const socket = `${mountpoint}.sock`;
    mkdirSync(backing, { recursive: true });
    mkdirSync(mountpoint, { recursive: true });
    for (const entry of readdirSync(mountpoint)) renameSync(join(mountpoint, entry), join(backing, entry));
    const mountId = this.registry.record({ kind: 'mount', path: mountpoint });
    const log = join(logDir, 'disk.log');
    const out = openSync(log, 'a');
    let child: ChildProcess;
    try {
      child = spawn(this.binary, [backing, mountpoint, socket], {
        detached: true,
        stdio: ['ignore', out, out],
      });
    } finally {
      closeSync(out);
    }
    const pid = child.pid;
    if (pid === undefined) throw new HarnessError(`the disk layer of ${node} did not start: ${this.binary}`);
    let processId: number;
    try {
      processId = this.registry.record({
        kind: 'process',
        pid,
        startTime: processStartTime(pid) ?? '',
        label: `${node}: disk layer`,
      });
    } catch (error) {
      // Not ours to manage if it is not recorded: end it now (its mount is recorded already).
      signalGroup(child, 'SIGKILL');
      throw error;
    }
    let resolveExit!: () => void;
    const exited = new Promise<void>((r) => (resolveExit = r));
    const mount: Mount = { mountpoint, socket, log, child, mountId, processId, exited, stopping: false };
    child.once('error', () => {
      // reported through 'exit'
    });
    child.once('exit', (code, signal) => {
      mount.exit = signal !== null ? `killed by ${signal}` : `exit code ${code}`;
      this.registry.forget(processId);
      resolveExit();
    });
    this.mounts.set(node, mount);
    const deadline = Date.now() + MOUNT_TIMEOUT_MS;
    for (;;) {
      this.check(node, mount);
      try {
        if ((await ask(socket, 'ping', MOUNT_TIMEOUT_MS)) === 'ok') return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new HarnessError(
          `the disk layer of ${node} did not answer within ${MOUNT_TIMEOUT_MS} ms: see ${log}`,
        );
      }
      await sleep(MOUNT_POLL_MS);
    }
  }

  /**
   * Sends a command to the node's layer (`drop-unfsynced`, `fsync-error on`, `slow 50`, …) and
   * returns its answer after `ok`. A layer that answers `error …` is a failed fault (thrown as an
   * Error); one that is gone or silent is Mallory's failure (`HarnessError`).
   */
  async command(node: string, line: string): Promise<string> {
    const mount = this.mounts.get(node);
    if (!mount) throw new HarnessError(`${node} has no disk layer mounted`);
    this.check(node, mount);
    let answer: string;
    try {
      answer = await ask(mount.socket, line, COMMAND_TIMEOUT_MS);
    } catch (error) {
      throw new HarnessError(
        `the disk layer of ${node} did not answer "${line}": ${error instanceof Error ? error.message : String(error)} (see ${mount.log})`,
        { cause: error },
      );
    }
    if (answer === 'ok' || answer.startsWith('ok ')) return answer.slice(3);
    throw new Error(`disk layer of ${node}: ${line}: ${answer}`);
  }

  /** Unmounts every layer (their nodes must be stopped) and ends the layer processes. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.mounts.values()].map(async (mount) => {
        mount.stopping = true;
        if (mount.exit === undefined) {
          // SIGTERM: the layer leaves its loop and unmounts itself.
          signalGroup(mount.child, 'SIGTERM');
          const stopped = await Promise.race([
            mount.exited.then(() => true),
            sleep(STOP_TIMEOUT_MS).then(() => false),
          ]);
          if (!stopped) {
            signalGroup(mount.child, 'SIGKILL');
            await mount.exited;
          }
        }
        this.registry.release(mount.mountId);
      }),
    );
    this.mounts.clear();
  }

  private check(node: string, mount: Mount): void {
    if (mount.exit !== undefined && !mount.stopping) {
      throw new HarnessError(`the disk layer of ${node} ended (${mount.exit}): see ${mount.log}`);
    }
  }
}
