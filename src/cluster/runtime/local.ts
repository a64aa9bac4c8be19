import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { copyFile, readFile } from 'node:fs/promises';

import { run } from '../../core/exec.js';
import { processStartTime, type ResourceRegistry } from '../resources.js';
import { signalGroup } from '../_internals/signal-group.js';
import { isLive, spawnLive } from './_internals/live-exec.js';
import type {
  ExecOptions,
  ExecResult,
  NodeRuntime,
  ProcessEnd,
  RuntimeCapabilities,
  RuntimeProcess,
  StartSpec,
} from './runtime.js';

/** This machine can do everything a run asks of a place. */
export const LOCAL_CAPABILITIES: RuntimeCapabilities = {
  sharedFilesystem: true,
  sharedClock: true,
  netem: true,
  fuse: true,
  libfaketime: true,
  checkpoints: true,
  membership: true,
  commandLeadsGroup: true,
};

interface LocalProcess extends RuntimeProcess {
  readonly child: ChildProcess;
}

/**
 * Signals the group of a process started on this host at once (before any promise), as the
 * cluster's synchronous callers need.
 */
export function signalGroupNow(proc: RuntimeProcess, signal: NodeJS.Signals): void {
  const child = (proc as Partial<LocalProcess>).child;
  if (child) signalGroup(child, signal);
  else {
    try {
      process.kill(-proc.pgid, signal);
    } catch {
      // already gone
    }
  }
}

/** A runtime for this machine (where the run's own files are). */
export function localRuntime(): NodeRuntime {
  return new LocalRuntime();
}

/**
 * This host: a node is a child process of the fuzzer, detached into its own process group, its
 * output appended to files by the kernel (no pipe through the fuzzer).
 */
export class LocalRuntime implements NodeRuntime {
  readonly place = { kind: 'local' } as const;
  readonly host = 'local';
  readonly capabilities = LOCAL_CAPABILITIES;

  start(spec: StartSpec, registry: ResourceRegistry): Promise<RuntimeProcess> {
    const out = openSync(spec.stdout, 'a');
    const err = openSync(spec.stderr, 'a');
    let child: ChildProcess;
    try {
      child = spawn(spec.argv[0], spec.argv.slice(1), {
        detached: true,
        stdio: ['ignore', out, err],
        env: { ...process.env, ...spec.env },
        cwd: spec.cwd,
      });
    } finally {
      closeSync(out);
      closeSync(err);
    }
    const pid = child.pid;
    if (pid === undefined) {
      return Promise.reject(new Error(`${spec.argv[0]} did not start (is it installed?)`));
    }
    let resourceId: number;
    try {
      resourceId = registry.record({
        kind: 'process',
        pid,
        startTime: processStartTime(pid) ?? '',
        label: spec.label,
      });
    } catch (error) {
      // Not ours to manage if it is not recorded: end it now rather than leave it to the registry.
      signalGroup(child, 'SIGKILL');
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    child.once('error', () => {
      // reported through 'exit'
    });
    const exited = new Promise<ProcessEnd>((resolve) => {
      child.once('exit', (code, signal) => {
        registry.forget(resourceId);
        resolve({ code, signal });
      });
    });
    const proc: LocalProcess = { pid, pgid: pid, resourceId, exited, child };
    return Promise.resolve(proc);
  }

  signal(proc: RuntimeProcess, signal: NodeJS.Signals): Promise<void> {
    signalGroupNow(proc, signal);
    return Promise.resolve();
  }

  exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    const { input } = options;
    if (!isLive(options) && (input === undefined || typeof input === 'string' || Buffer.isBuffer(input))) {
      const { timeoutMs, cleanup } = options;
      return run(argv, input === undefined ? { timeoutMs, cleanup } : { input, timeoutMs, cleanup });
    }
    return spawnLive(argv, options);
  }

  put(path: string, localFile: string): Promise<void> {
    return copyFile(localFile, path);
  }

  get(path: string): Promise<Buffer> {
    return readFile(path);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
