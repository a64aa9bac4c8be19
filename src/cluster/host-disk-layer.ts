import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { sleep } from '../core/clock.js';
import { HarnessError, UsageError } from '../core/errors.js';
import type { NodeLayout } from './runtime/node-layout.js';
import { DISK_LAYER_FIX, diskLayerSource } from './disk-layer.js';
import type { ResourceRegistry } from './resources.js';
import { shellLine, shellQuote } from '../core/shell.js';
import type { NodeRuntime, ProcessEnd, RuntimeProcess } from './runtime/runtime.js';
import { undoOn } from './runtime/undo-on.js';
import { isRunnableOn, readFileOn, uploadTo } from './runtime/files.js';

/** Where a host keeps the layer it built, one dir per source hash: a later run there reuses it. */
export const HOST_DISK_CACHE = '/var/cache/mallory';
const BINARY_NAME = 'mallory-disk';
const BUILD_TIMEOUT_MS = 120_000;
const MOUNT_TIMEOUT_MS = 10_000;
const MOUNT_POLL_MS = 100;
/** A drop walks the node's whole data dir. */
const COMMAND_TIMEOUT_MS = 30_000;
/** How long a layer has to unmount itself on SIGTERM before it is killed and unmounted lazily. */
const STOP_TIMEOUT_MS = 5_000;
const STOP_POLL_S = 0.1;

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

interface HostMount {
  readonly runtime: NodeRuntime;
  readonly binary: string;
  readonly mountpoint: string;
  readonly socket: string;
  /** The layer's output on the host, copied to `localLog` when it is unmounted. */
  readonly log: string;
  readonly localLog: string;
  readonly proc: RuntimeProcess;
  readonly mountId: number;
  stopping: boolean;
  exit?: string;
}

function describeEnd(end: ProcessEnd): string {
  return end.signal !== null ? `killed by ${end.signal}` : `exit code ${end.code}`;
}

/**
 * The FUSE disk layers of a run whose nodes are on other hosts: the layer's C source is built on
 * each host once per source hash (under `HOST_DISK_CACHE`), then one `mallory-disk` per node is
 * started through the node's runtime, mounted over the node's data dir on its host (files in
 * `<data dir>.disk`, commands on `<data dir>.sock`, all under the run's dir there). Commands go
 * through the runtime too, as `mallory-disk --ask SOCKET LINE` on the host. The mount is in the
 * registry (a lazy unmount on the host) before it is made, and the layer process as the runtime
 * records what it starts, so the end of the run, Ctrl-C and `mallory cleanup` undo both.
 */
export class HostDiskLayer {
  private readonly mounts = new Map<string, HostMount>();
  private readonly builds = new Map<string, Promise<string>>();

  constructor(
    private readonly layout: NodeLayout,
    private readonly registry: ResourceRegistry,
  ) {}

  isMounted(node: string): boolean {
    return this.mounts.has(node);
  }

  /** Builds the layer on the host if its cache lacks this source version; returns the binary's path there. */
  private build(node: string, runtime: NodeRuntime): Promise<string> {
    let built = this.builds.get(runtime.host);
    if (!built) {
      built = this.buildOn(node, runtime);
      this.builds.set(runtime.host, built);
    }
    return built;
  }

  private async buildOn(node: string, runtime: NodeRuntime): Promise<string> {
    const sourceFile = diskLayerSource();
    const hash = createHash('sha256').update(readFileSync(sourceFile)).digest('hex').slice(0, 12);
    const dir = `${HOST_DISK_CACHE}/disk-layer-${hash}`;
    const binary = `${dir}/${BINARY_NAME}`;
    if (await isRunnableOn(runtime, binary)) return binary;
    // The source goes to the run's dir there (removed with it); the binary is built beside its
    // final name and renamed into place, so a reader never sees half of it.
    const source = join(this.layout.root, `disk-layer-${hash}.c`);
    await uploadTo(runtime, sourceFile, source);
    const partial = `${dir}/.${BINARY_NAME}.${process.pid}.${node}`;
    const partialId = this.registry.record(
      undoOn(runtime.place, shellLine(['rm', '-f', partial]), `file ${partial} on ${runtime.host}`),
    );
    const script =
      `mkdir -p ${shellQuote(dir)} && ` +
      `gcc -O2 -Wall -o ${shellQuote(partial)} ${shellQuote(source)} $(pkg-config --cflags --libs fuse3) && ` +
      `mv -f ${shellQuote(partial)} ${shellQuote(binary)}`;
    const result = await runtime.exec(['/bin/sh', '-c', script], { timeoutMs: BUILD_TIMEOUT_MS });
    if (result.code !== 0) {
      await runtime.exec(['rm', '-f', partial]);
      this.registry.forget(partialId);
      throw new UsageError(
        'missing-binary',
        `host ${runtime.host}: cannot build the disk layer there (${DISK_LAYER_FIX} on the host): ${result.stderr.trim().split('\n').slice(-3).join(' ')}`,
      );
    }
    this.registry.forget(partialId);
    return binary;
  }

  /**
   * Mounts the layer over `mountpoint` on the node's host (once per node and run; the run's dir
   * there made already) and waits until it answers. What the dir already holds moves under the
   * layer first. `logDir` is the node's log dir here: the layer's output is copied there as
   * `disk.log` when it is unmounted.
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
    const binary = await this.build(node, runtime);
    const backing = `${mountpoint}.disk`;
    const socket = `${mountpoint}.sock`;
    const log = join(this.layout.root, 'nodes', node, 'disk.log');
    const moved = await runtime.exec([
      '/bin/sh',
      '-c',
      `mkdir -p ${shellQuote(backing)} ${shellQuote(mountpoint)} && ` +
        `find ${shellQuote(mountpoint)} -mindepth 1 -maxdepth 1 -exec mv -t ${shellQuote(backing)} {} +`,
    ]);
    if (moved.code !== 0) {
      throw new HarnessError(
        `host ${runtime.host}: cannot prepare ${node}'s disk layer: ${moved.stderr.trim()}`,
      );
    }
    const mountId = this.registry.record(
      undoOn(runtime.place, unmountScript(mountpoint), `mount ${mountpoint} on ${runtime.host}`),
    );
    let proc: RuntimeProcess;
    try {
      proc = await runtime.start(
        {
          argv: [binary, backing, mountpoint, socket],
          env: {},
          cwd: this.layout.root,
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
    const mount: HostMount = {
      runtime,
      binary,
      mountpoint,
      socket,
      log,
      localLog: join(logDir, 'disk.log'),
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

  private ask(
    mount: HostMount,
    line: string,
    timeoutMs: number,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    return mount.runtime.exec([mount.binary, '--ask', mount.socket, line], { timeoutMs });
  }

  /**
   * Sends a command to the node's layer and returns its answer after `ok`. A layer that answers
   * `error …` is a failed fault (thrown as an Error); one that is gone or silent is Mallory's
   * failure (`HarnessError`).
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
   * still mounted after `STOP_TIMEOUT_MS` is killed and unmounted lazily. Each layer's output is
   * copied to its node's log dir here.
   */
  async close(): Promise<void> {
    await Promise.all(
      [...this.mounts.values()].map(async (mount) => {
        mount.stopping = true;
        const { runtime, mountpoint } = mount;
        if (mount.exit === undefined) {
          await runtime.signal(mount.proc, 'SIGTERM');
          await runtime.exec(['/bin/sh', '-c', waitUnmountedScript(mountpoint)], {
            timeoutMs: STOP_TIMEOUT_MS * 2,
          });
          await runtime.signal(mount.proc, 'SIGKILL');
        }
        await runtime.exec(['/bin/sh', '-c', unmountScript(mountpoint)]);
        this.registry.forget(mount.mountId);
        await Promise.race([mount.proc.exited, sleep(STOP_TIMEOUT_MS)]);
        try {
          writeFileSync(mount.localLog, await readFileOn(runtime, mount.log));
        } catch {
          // It wrote nothing, or the host is gone: the run goes on ending.
        }
      }),
    );
    this.mounts.clear();
  }

  private check(node: string, mount: HostMount): void {
    if (mount.exit !== undefined && !mount.stopping) {
      throw new HarnessError(
        `the disk layer of ${node} on ${mount.runtime.host} ended (${mount.exit}): see ${mount.log} there`,
      );
    }
  }
}

/** Whether `mountpoint` is a mount point, as a shell test on the host's `/proc/self/mounts`. */
function mountedTest(mountpoint: string): string {
  return `grep -qF ${shellQuote(` ${mountpoint} `)} /proc/self/mounts`;
}

/** Unmounts `mountpoint` lazily if it is mounted; never fails. */
function unmountScript(mountpoint: string): string {
  const m = shellQuote(mountpoint);
  return `if ${mountedTest(mountpoint)}; then fusermount3 -u -z ${m} 2>/dev/null || umount -l ${m} 2>/dev/null; fi; true`;
}

/** Waits (at most `STOP_TIMEOUT_MS`) until `mountpoint` is no longer mounted. */
function waitUnmountedScript(mountpoint: string): string {
  const polls = Math.ceil(STOP_TIMEOUT_MS / (STOP_POLL_S * 1000));
  return `i=0; while ${mountedTest(mountpoint)} && [ $i -lt ${polls} ]; do sleep ${STOP_POLL_S}; i=$((i+1)); done; true`;
}
