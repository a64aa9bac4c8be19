import { dirname } from 'node:path';

import {
  clockControlFile,
  faketimeSharedFiles,
  faketimeSpec,
  LIBFAKETIME_NAME,
  type NodeClockPreload,
  preloadEnv,
  type RemoveSharedFiles,
} from './clock-preload.js';
import type { ResourceRegistry } from './resources.js';
import { shellLine, shellQuote } from '../core/shell.js';
import type { NodeRuntime } from './runtime/runtime.js';
import { undoOn } from './runtime/undo-on.js';

/** What to run on a host that lacks libfaketime. */
export const HOST_LIBFAKETIME_FIX = 'apt-get install -y faketime';
/** How long the node under a started group's leader is looked for (it is forked right after the leader says its pid). */
const NODE_PID_TRIES = 200;
const NODE_PID_POLL_S = '0.01';

/** The one line that refuses clock faults on a host without libfaketime. */
export function libfaketimeMissing(host: string): string {
  return `host ${host}: clock faults need libfaketime there (no ${LIBFAKETIME_NAME} in its faketime package paths): ${HOST_LIBFAKETIME_FIX} on the host, or drop clock from --faults`;
}

/**
 * The shell text that puts `offsetMs` in a control file whole (a temp file moved over it, so
 * libfaketime reads the old text or the new); with `ifMissing` an existing file stays as it is.
 */
export function controlFileScript(
  file: string,
  offsetMs: number,
  options: { readonly ifMissing?: boolean; readonly mkdir?: boolean } = {},
): string {
  const f = shellQuote(file);
  const temp = shellQuote(`${file}.tmp`);
  return (
    (options.ifMissing === true ? `[ -e ${f} ] && exit 0; ` : '') +
    (options.mkdir === true ? `mkdir -p ${shellQuote(dirname(file))} && ` : '') +
    `printf '%s\\n' ${shellQuote(faketimeSpec(offsetMs).trim())} > ${temp} && mv -f ${temp} ${f}`
  );
}

/** Each node's control file on its own host, under the run's dir there (`<root>/nodes/<n>/clock.faketime`). */
export class HostControlFiles {
  /** Nodes whose control file's dir is known to be there. */
  private readonly dirMade = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly runtimeOf: (node: string) => NodeRuntime,
  ) {}

  path(node: string): string {
    return clockControlFile(this.root, node);
  }

  /** Writes the node's offset there in one command (see `controlFileScript`). */
  async write(node: string, offsetMs: number, ifMissing = false): Promise<void> {
    const runtime = this.runtimeOf(node);
    const file = this.path(node);
    const script = controlFileScript(file, offsetMs, { ifMissing, mkdir: !this.dirMade.has(node) });
    const result = await runtime.exec(['sh', '-c', script]);
    if (result.code !== 0) {
      throw new Error(
        `host ${runtime.host}: cannot write ${node}'s clock control file ${file} (exit ${result.code}): ${result.stderr.trim()}`,
      );
    }
    this.dirMade.add(node);
  }
}

/**
 * The shell text that prints the first child of process `pid` (the node its group's leader
 * started), waiting for it: from `/proc/<pid>/task/<pid>/children`, else (a kernel without it) from
 * the parent pid field of every `/proc/<p>/stat`.
 */
export function nodePidScript(pid: number): string {
  const children = `/proc/${pid}/task/${pid}/children`;
  const scan = childScanScript(pid);
  return (
    `i=0; while [ $i -lt ${NODE_PID_TRIES} ]; do c=; ` +
    `if [ -e ${children} ]; then read -r c 2>/dev/null < ${children}; else ${scan}; fi; set -- $c; ` +
    `[ -n "$1" ] && { echo "$1"; exit 0; }; [ -d /proc/${pid} ] || exit 1; ` +
    `sleep ${NODE_PID_POLL_S}; i=$((i+1)); done; exit 1`
  );
}

/** The shell text that sets `c` to a child of process `pid`, found by the parent pid field of every `/proc/<p>/stat`. */
export function childScanScript(pid: number): string {
  return (
    `for f in /proc/[0-9]*/stat; do l=; read -r l 2>/dev/null < "$f" || continue; ` +
    `set -- \${l##*) }; [ "$2" = ${pid} ] && { d=\${f%/stat}; c=\${d#/proc/}; break; }; done`
  );
}

/**
 * libfaketime preloaded into nodes on SSH hosts: the library at its path on each host (found there
 * before the run), the control files there (`HostControlFiles`), and the shared-memory files a
 * killed node leaves in the host's /dev/shm recorded as the host's, removed there.
 */
export class HostClockPreload implements NodeClockPreload {
  constructor(
    private readonly libraryOf: (node: string) => string,
    private readonly files: HostControlFiles,
    private readonly runtimeOf: (node: string) => NodeRuntime,
  ) {}

  async env(node: string): Promise<Record<string, string>> {
    await this.files.write(node, 0, true);
    return preloadEnv(this.libraryOf(node), this.files.path(node));
  }

  /**
   * The files are named after the node's own pid: on a host the runtime's process is the group's
   * leader, a shell whose child the node is, so that child's pid is asked for first.
   */
  async trackSharedFiles(node: string, pid: number, registry: ResourceRegistry): Promise<RemoveSharedFiles> {
    const runtime = this.runtimeOf(node);
    const found = await runtime.exec(['sh', '-c', nodePidScript(pid)]);
    const nodePid = Number(found.stdout.trim());
    // Ended before it forked: libfaketime was never loaded, so it made no files.
    if (found.code !== 0 || !Number.isInteger(nodePid) || nodePid <= 0) return () => undefined;
    const files = faketimeSharedFiles(nodePid);
    const id = registry.record(
      undoOn(
        runtime.place,
        shellLine(['rm', '-f', ...files]),
        `libfaketime files of ${node} (pid ${nodePid}) on ${runtime.host}`,
      ),
    );
    return async () => {
      const removed = await runtime.exec(['rm', '-f', ...files]).catch(() => undefined);
      // Not removed now (the connection is gone): the registry's own connection removes them, or cleanup.
      if (removed?.code === 0) registry.forget(id);
    };
  }
}
