import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { sleep, within } from '../core/clock.js';
import { HarnessError, UsageError } from '../core/errors.js';
import { cacheDir } from '../core/fs.js';
import { shellLine, shellQuote } from '../core/shell.js';
import { askSocket } from './_internals/disk-socket.js';
import type { ResourceRegistry } from './resources.js';
import { isRunnableOn, readFileOn, uploadTo } from './runtime/files.js';
import { localRuntime } from './runtime/local.js';
import type { NodeLayout } from './runtime/node-layout.js';
import type { ExecResult, NodeRuntime, ProcessEnd, RuntimeProcess } from './runtime/runtime.js';
import { undoOn } from './runtime/undo-on.js';

/** The Debian packages the disk layer needs, as the fix printed when one is missing. */
export const DISK_LAYER_FIX = 'apt-get install -y gcc libfuse3-dev fuse3 pkg-config';
/** Where another host keeps the layer it built, one dir per source hash: a later run there reuses it. */
export const HOST_DISK_CACHE = '/var/cache/mallory';
const SOURCE_NAME = 'disk-layer.c';
const BINARY_NAME = 'mallory-disk';
const BUILD_TIMEOUT_MS = 120_000;
const MOUNT_TIMEOUT_MS = 10_000;
const MOUNT_POLL_MS = 50;
/** A drop walks the node's whole data dir. */
const COMMAND_TIMEOUT_MS = 30_000;
/** How long a layer has to unmount itself on SIGTERM before it is killed and unmounted lazily. */
const STOP_TIMEOUT_MS = 5_000;

/** The layer's C source: beside this module in src/, or in src/ when this runs from dist/. */
export function diskLayerSource(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, '_internals', SOURCE_NAME);
  if (existsSync(beside)) return beside;
  return resolve(here, '../../src/cluster/_internals', SOURCE_NAME);
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

/** What building and mounting the layer needs and this machine lacks (`diskLayerNeedsOn` here). */
export async function diskLayerNeeds(): Promise<{ missing: string[] }> {
  return { missing: await diskLayerNeedsOn(localRuntime()) };
}

/** The fix for what a host lacks for disk faults, as one clause. */
export function diskLayerFixFor(missing: readonly string[]): string {
  const tools = missing.filter((m) => m !== '/dev/fuse');
  const fixes = [
    ...(missing.includes('/dev/fuse') ? ['modprobe fuse (for /dev/fuse)'] : []),
    ...(tools.length > 0 ? [DISK_LAYER_FIX] : []),
  ];
  return fixes.join(' and ');
}

/** The one line a run on hosts is refused with when `host` lacks what the disk layer needs. */
export function diskHostRefusal(host: string, missing: readonly string[]): string {
  return `host ${host}: disk faults build and mount a FUSE layer there, and it lacks ${missing.join(', ')}: run ${diskLayerFixFor(missing)} on the host, or drop disk from --faults`;
}

/**
 * Builds the layer where `runtime` runs, into `cache` there, unless this source version is built
 * already; returns the binary's path there. The source goes to `scratch` there first (a dir of the
 * run's, removed with it) when that host does not share this machine's files. The binary is built
 * beside its final name (recorded in `registry`, when given) and renamed into place, so a reader
 * never sees half of it.
 */
export async function buildDiskLayerOn(
  runtime: NodeRuntime,
  cache: string,
  scratch: string,
  registry?: ResourceRegistry,
): Promise<string> {
  const sourceFile = diskLayerSource();
  const hash = createHash('sha256').update(readFileSync(sourceFile)).digest('hex').slice(0, 12);
  const dir = `${cache}/disk-layer-${hash}`;
  const binary = `${dir}/${BINARY_NAME}`;
  if (await isRunnableOn(runtime, binary)) return binary;
  let source = sourceFile;
  if (!runtime.capabilities.sharedFilesystem) {
    source = join(scratch, `disk-layer-${hash}.c`);
    await uploadTo(runtime, sourceFile, source);
  }
  const partial = `${dir}/.${BINARY_NAME}.${process.pid}.${Date.now()}`;
  const partialId = registry?.record(
    undoOn(runtime.place, shellLine(['rm', '-f', partial]), `file ${partial} on ${runtime.host}`),
  );
  const script =
    `mkdir -p ${shellQuote(dir)} && ` +
    `gcc -O2 -Wall -o ${shellQuote(partial)} ${shellQuote(source)} $(pkg-config --cflags --libs fuse3) && ` +
    `mv -f ${shellQuote(partial)} ${shellQuote(binary)}`;
  const result = await runtime.exec(['/bin/sh', '-c', script], { timeoutMs: BUILD_TIMEOUT_MS });
  if (result.code !== 0) await runtime.exec(['rm', '-f', partial]);
  if (partialId !== undefined) registry?.forget(partialId);
  if (result.code !== 0) {
    throw new UsageError(
      'missing-binary',
      `host ${runtime.host}: cannot build the disk layer from ${source} (${DISK_LAYER_FIX} there): ${result.stderr.trim().split('\n').slice(-3).join(' ')}`,
    );
  }
  return binary;
}

/**
 * Builds the layer (`mallory-disk`) on this machine, into the cache dir, unless this source version
 * is built already; returns the binary's path. Throws a `UsageError` naming the fix when FUSE,
 * gcc or libfuse3 is missing.
 */
export async function buildDiskLayer(): Promise<string> {
  const { missing } = await diskLayerNeeds();
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
  return buildDiskLayerOn(localRuntime(), cacheDir(), cacheDir());
}

interface Mount {
  readonly runtime: NodeRuntime;
  readonly binary: string;
  readonly mountpoint: string;
  readonly socket: string;
  /** The layer's output where it runs. */
  readonly log: string;
  /** Where its output is copied here when it is unmounted (undefined: `log` is here already). */
  readonly copyTo: string | undefined;
  readonly proc: RuntimeProcess;
  readonly mountId: number;
  stopping: boolean;
  exit?: string;
}

function describeEnd(end: ProcessEnd): string {
  return end.signal !== null ? `killed by ${end.signal}` : `exit code ${end.code}`;
}

/**
 * The FUSE disk layers of one run: one `mallory-disk` per node, started through the node's
 * runtime, mounted over the node's data dir where it runs (files in `<data dir>.disk`, commands
 * on `<data dir>.sock`). The binary is `built` here before the run, or built on each other host
 * once per source hash (under `HOST_DISK_CACHE`). A command goes to the socket directly where
 * the runtime shares this machine's files, else as `mallory-disk --ask SOCKET LINE` run there.
 * The mount is in the registry (a lazy unmount there) before it is made, and the layer process as
 * the runtime records what it starts, so the end of the run, Ctrl-C and `mallory cleanup` undo both.
 */
export class DiskLayer {
  private readonly mounts = new Map<string, Mount>();
  private readonly builds = new Map<string, Promise<string>>();

  constructor(
    private readonly layout: Pick<NodeLayout, 'runtimeOf' | 'root'>,
    private readonly registry: ResourceRegistry,
    /** The binary built on this machine (`buildDiskLayer`), for the runtimes that share its files. */
    private readonly built?: string,
  ) {}

  isMounted(node: string): boolean {
    return this.mounts.has(node);
  }

  private binaryFor(runtime: NodeRuntime): Promise<string> {
    if (this.built !== undefined && runtime.capabilities.sharedFilesystem) return Promise.resolve(this.built);
    let built = this.builds.get(runtime.host);
    if (!built) {
      built = buildDiskLayerOn(runtime, HOST_DISK_CACHE, this.layout.root, this.registry);
      this.builds.set(runtime.host, built);
    }
    return built;
  }

  /**
   * Mounts the layer over `mountpoint` where the node runs (once per node and run; the run's dir
   * there made already) and waits until it answers. What the dir already holds moves under the
   * layer first. The layer's output ends up in `<logDir>/disk.log` here.
   */
  async mount(node: string, mountpoint: string, logDir: string): Promise<void> {
    const known = this.mounts.get(node);
    if (known) {
      this.check(node, known);
      return;
    }
    const runtime = this.layout.runtimeOf(node);
    if (!runtime.capabilities.fuse) {
      throw new HarnessError(
        `${node}: the disk layer needs FUSE where the node runs, and ${runtime.host} has none`,
      );
    }
    const binary = await this.binaryFor(runtime);
    const backing = `${mountpoint}.disk`;
    const socket = `${mountpoint}.sock`;
    const here = join(logDir, 'disk.log');
    const shared = runtime.capabilities.sharedFilesystem;
    const log = shared ? here : join(this.layout.root, 'nodes', node, 'disk.log');
    const moved = await runtime.exec([
      '/bin/sh',
      '-c',
      `mkdir -p ${shellQuote(backing)} ${shellQuote(mountpoint)} ${shellQuote(dirname(log))} && ` +
        `find ${shellQuote(mountpoint)} -mindepth 1 -maxdepth 1 -exec mv -t ${shellQuote(backing)} {} +`,
    ]);
    if (moved.code !== 0) {
      throw new HarnessError(
        `host ${runtime.host}: cannot prepare ${node}'s disk layer: ${moved.stderr.trim()}`,
      );
    }
    // Here, a mount the registry unmounts itself (a removal, at once); elsewhere, shell text
    // that unmounts it there, run over the runtime's connection when the layer is closed.
    const mountId = this.registry.record(
      shared
        ? { kind: 'mount', path: mountpoint }
        : undoOn(runtime.place, unmountScript(mountpoint), `mount ${mountpoint} on ${runtime.host}`),
    );
    let proc: RuntimeProcess;
    try {
      proc = await runtime.start(
        {
          argv: [binary, backing, mountpoint, socket],
          env: {},
          cwd: dirname(mountpoint),
          stdout: log,
          stderr: log,
          label: `${node}: disk layer`,
        },
        this.registry,
      );
    } catch (error) {
      this.registry.release(mountId);
      throw error;
    }
    const mount: Mount = {
      runtime,
      binary,
      mountpoint,
      socket,
      log,
      copyTo: shared ? undefined : here,
      proc,
      mountId,
      stopping: false,
    };
    void proc.exited.then((end) => {
      mount.exit = describeEnd(end);
    });
    this.mounts.set(node, mount);
    const deadline = Date.now() + MOUNT_TIMEOUT_MS;
    for (;;) {
      this.check(node, mount);
      const answer = await this.ask(mount, 'ping', MOUNT_TIMEOUT_MS);
      if (answer.code === 0 && answer.stdout.trim() === 'ok') return;
      if (Date.now() > deadline) {
        throw new HarnessError(
          `the disk layer of ${node} on ${runtime.host} did not answer within ${MOUNT_TIMEOUT_MS} ms: see ${log} there`,
        );
      }
      await sleep(MOUNT_POLL_MS);
    }
  }

  /** One command line to the layer, its answer as a command's outcome (`ok …` on stdout). */
  private async ask(mount: Mount, line: string, timeoutMs: number): Promise<ExecResult> {
    if (!mount.runtime.capabilities.sharedFilesystem) {
      return mount.runtime.exec([mount.binary, '--ask', mount.socket, line], { timeoutMs });
    }
    try {
      return { code: 0, stdout: `${await askSocket(mount.socket, line, timeoutMs)}\n`, stderr: '' };
    } catch (error) {
      return { code: 1, stdout: '', stderr: error instanceof Error ? error.message : String(error) };
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
    const result = await this.ask(mount, line, COMMAND_TIMEOUT_MS);
    const answer = result.stdout.trim();
    if (result.code !== 0 || answer === '') {
      throw new HarnessError(
        `the disk layer of ${node} on ${mount.runtime.host} did not answer "${line}": ${result.stderr.trim() || `exit ${result.code}`} (see ${mount.log} there)`,
      );
    }
    if (answer === 'ok' || answer.startsWith('ok ')) return answer.slice(3);
    throw new Error(`disk layer of ${node}: ${line}: ${answer}`);
  }

  /**
   * Ends every layer (their nodes must be stopped): SIGTERM, on which a layer unmounts itself; one
   * still running after `STOP_TIMEOUT_MS` is killed and unmounted lazily. A layer's output on
   * another host is copied to its node's log dir here.
   */
  async close(): Promise<void> {
    await Promise.all(
      [...this.mounts.values()].map(async (mount) => {
        mount.stopping = true;
        const { runtime, mountpoint, proc } = mount;
        const ended = (): Promise<boolean> =>
          within(
            proc.exited.then(() => true),
            STOP_TIMEOUT_MS,
            false,
          );
        if (mount.exit === undefined) {
          await runtime.signal(proc, 'SIGTERM');
          if (!(await ended())) {
            await runtime.signal(proc, 'SIGKILL');
            await ended();
          }
        }
        if (mount.copyTo === undefined) {
          this.registry.release(mount.mountId);
          return;
        }
        await runtime.exec(['/bin/sh', '-c', unmountScript(mountpoint)]);
        this.registry.forget(mount.mountId);
        try {
          writeFileSync(mount.copyTo, await readFileOn(runtime, mount.log));
        } catch {
          // It wrote nothing, or the host is gone: the run goes on ending.
        }
      }),
    );
    this.mounts.clear();
  }

  private check(node: string, mount: Mount): void {
    if (mount.exit !== undefined && !mount.stopping) {
      throw new HarnessError(
        `the disk layer of ${node} on ${mount.runtime.host} ended (${mount.exit}): see ${mount.log} there`,
      );
    }
  }
}

/** Unmounts `mountpoint` lazily if it is mounted (as `/proc/self/mounts` says there); never fails. */
function unmountScript(mountpoint: string): string {
  const m = shellQuote(mountpoint);
  return `if grep -qF ${shellQuote(` ${mountpoint} `)} /proc/self/mounts; then fusermount3 -u -z ${m} 2>/dev/null || umount -l ${m} 2>/dev/null; fi; true`;
}
