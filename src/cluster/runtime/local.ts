import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { copyFile, open, readFile } from 'node:fs/promises';

import { run } from '../../core/exec.js';
import { processStartTime, type ResourceRegistry } from '../resources.js';
import { signalGroup } from '../_internals/signal-group.js';
import type {
  ExecOptions,
  ExecResult,
  FileStream,
  NodeRuntime,
  ProcessEnd,
  RuntimeCapabilities,
  RuntimeProcess,
  StartSpec,
} from './runtime.js';

/** How often a streamed file is looked at for what was appended. */
const STREAM_POLL_MS = 100;
const STREAM_CHUNK_BYTES = 64 * 1024;

/** This machine can do everything a run asks of a place. */
export const LOCAL_CAPABILITIES: RuntimeCapabilities = {
  sharedFilesystem: true,
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
    return run(argv, options);
  }

  put(path: string, localFile: string): Promise<void> {
    return copyFile(localFile, path);
  }

  get(path: string): Promise<Buffer> {
    return readFile(path);
  }

  stream(path: string, onData: (chunk: Buffer) => void): FileStream {
    let offset = 0;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const poll = async (): Promise<void> => {
      try {
        const handle = await open(path, 'r');
        try {
          const buffer = Buffer.alloc(STREAM_CHUNK_BYTES);
          for (;;) {
            const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
            if (bytesRead === 0) break;
            offset += bytesRead;
            onData(Buffer.from(buffer.subarray(0, bytesRead)));
          }
        } finally {
          await handle.close();
        }
      } catch {
        // not there yet
      }
    };
    let polling: Promise<void> = Promise.resolve();
    const tick = (): void => {
      polling = poll().finally(() => {
        if (!stopped) timer = setTimeout(tick, STREAM_POLL_MS);
      });
    };
    tick();
    return {
      stop: async () => {
        stopped = true;
        clearTimeout(timer);
        await polling;
        await poll();
      },
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
