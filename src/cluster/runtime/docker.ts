import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';

import type { ResourceRegistry } from '../resources.js';
import { docker, type DockerEndpoint, dockerArgv, EXEC_TIMEOUT_MS } from './docker-command.js';
import {
  groupStartScript,
  GroupStartReader,
  killGroupByPidScript,
  killGroupScript,
} from './_internals/group-shell.js';
import { isLive, spawnLive } from './_internals/live-exec.js';
import { ShellPool, ShellSession } from './_internals/shell-session.js';
import { shellLine, shellQuote } from '../../core/shell.js';
import { containerExecArgv, type RuntimePlace } from './undo-on.js';
import type {
  ExecOptions,
  ExecResult,
  NodeRuntime,
  ProcessEnd,
  RuntimeCapabilities,
  RuntimeProcess,
  StartSpec,
} from './runtime.js';

export { docker, type DockerEndpoint, dockerArgv, type DockerResult } from './docker-command.js';

/** Shells kept open per container for short commands. */
const SHELLS = 2;

/** A container has only what partitions, kills, pauses and packet loss need (not done yet: the rest). */
export const DOCKER_CAPABILITIES: RuntimeCapabilities = {
  sharedFilesystem: false,
  sharedClock: true,
  netem: false,
  fuse: false,
  libfaketime: false,
  checkpoints: false,
  membership: false,
  commandLeadsGroup: false,
};

/** The runtime of a node's container, driven through the docker client at `endpoint`. */
export function containerRuntime(endpoint: DockerEndpoint, container: string): NodeRuntime {
  return new DockerRuntime(endpoint, container);
}

interface DockerProcess extends RuntimeProcess {
  readonly pidFile: string;
}

/**
 * A node's container, driven through the docker client: every command is `docker exec -u 0` in
 * it, so a node's process group, its files and the iptables rules of partitions are the
 * container's own. A node starts as on an SSH host (the same shell line: its own process group,
 * a pid file, the exit status said last) with the `docker exec` client waiting for it.
 */
export class DockerRuntime implements NodeRuntime {
  readonly place: RuntimePlace;
  readonly capabilities = DOCKER_CAPABILITIES;
  private nextPidFile = 0;
  /** Short commands run on these (see `ShellPool`). */
  private readonly shells = new ShellPool(SHELLS, (onClosed) => this.openShell(onClosed));

  constructor(
    readonly endpoint: DockerEndpoint,
    /** The container's name. */
    readonly container: string,
  ) {
    this.place = { kind: 'docker', endpoint, container };
  }

  get host(): string {
    return `container ${this.container}`;
  }

  /** `docker exec` of shell text as root in the container, its argv. */
  private execArgv(script: string, interactive = false): string[] {
    return containerExecArgv(this.container, script, interactive);
  }

  /**
   * Runs shell text as root in the container to completion: on a shell kept open in it (a
   * `docker exec` costs the client's start and the daemon's exec set-up each time), else by a
   * `docker exec` of its own.
   */
  async shell(script: string, timeoutMs = EXEC_TIMEOUT_MS): Promise<ExecResult> {
    const kept = await this.shells.run(script, timeoutMs);
    if (kept !== undefined) return kept;
    const result = await docker(this.endpoint, this.execArgv(script), { timeoutMs });
    return { code: result.code, stdout: result.stdout.toString(), stderr: result.stderr };
  }

  /** A `docker exec -i … sh` kept open, its own process group (ended by close, or with its container). */
  private openShell(onClosed: () => void): Promise<ShellSession> {
    const argv = dockerArgv(this.endpoint, ['exec', '-i', '-u', '0', this.container, 'sh']);
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      child.once('error', reject);
      child.once('spawn', () => {
        child.stdin.on('error', () => {
          // the shell is gone: its close answers what was pending
        });
        resolve(
          new ShellSession({
            write: (text) => {
              child.stdin.write(text);
            },
            onStdout: (l) => {
              child.stdout.on('data', l);
            },
            onStderr: (l) => {
              child.stderr.on('data', l);
            },
            onClose: (l) => {
              child.once('close', () => {
                l();
                onClosed();
              });
            },
            close: () => {
              child.kill('SIGKILL');
            },
          }),
        );
      });
    });
  }

  /**
   * On a kept shell; with `input`, by a `docker exec -i` of its own, `input` its stdin; a live
   * command by a `docker exec` of its own whose client stays attached.
   */
  async exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    const { input } = options;
    if (isLive(options) || (input !== undefined && typeof input !== 'string' && !Buffer.isBuffer(input))) {
      const client = dockerArgv(this.endpoint, this.execArgv(shellLine(argv), input !== undefined));
      return spawnLive(client, options, EXEC_TIMEOUT_MS);
    }
    if (input === undefined) return this.shell(shellLine(argv), options.timeoutMs);
    const result = await docker(this.endpoint, this.execArgv(shellLine(argv), true), {
      input,
      timeoutMs: options.timeoutMs ?? EXEC_TIMEOUT_MS,
    });
    return { code: result.code, stdout: result.stdout.toString(), stderr: result.stderr };
  }

  private async must(script: string): Promise<Buffer> {
    const result = await docker(this.endpoint, this.execArgv(script));
    if (result.code !== 0) {
      throw new Error(`${this.host}: \`${script}\` failed (exit ${result.code}): ${result.stderr.trim()}`);
    }
    return result.stdout;
  }

  /** The undo of something made in the container: shell text run there by the docker client. */
  private undo(script: string): readonly string[] {
    return dockerArgv(this.endpoint, this.execArgv(script));
  }

  /**
   * Starts the command in its own process group in the container; the `docker exec` client stays
   * attached, reading the pid line first and the exit line last. Recorded by its pid file before
   * anything runs and by pid and start time once known (removing the container ends it too).
   */
  async start(spec: StartSpec, registry: ResourceRegistry): Promise<RuntimeProcess> {
    const pidFile = join(dirname(spec.stdout), `.pid-${process.pid}-${this.nextPidFile++}`);
    const resourceId = registry.record({
      kind: 'command',
      undo: this.undo(killGroupScript(pidFile)),
      label: `process group in ${this.host} (${spec.label})`,
    });
    const argv = dockerArgv(this.endpoint, this.execArgv(groupStartScript(spec, pidFile)));
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      } catch (error) {
        registry.release(resourceId);
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const said = new GroupStartReader();
      let stderr = '';
      let byPid: number | undefined;
      let resolveExit!: (end: ProcessEnd) => void;
      const exited = new Promise<ProcessEnd>((r) => (resolveExit = r));
      child.stdout?.on('data', (d: Buffer) => {
        const before = said.started;
        said.feed(d);
        const started = said.started;
        if (before === undefined && started !== undefined) {
          byPid = registry.record({
            kind: 'command',
            undo: this.undo(killGroupByPidScript(started.pid, started.start)),
            label: `process group ${started.pid} in ${this.host} (${spec.label})`,
          });
          registry.forget(resourceId);
          const proc: DockerProcess = {
            pid: started.pid,
            pgid: started.pid,
            resourceId: byPid,
            exited,
            pidFile,
          };
          resolve(proc);
        }
      });
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', (error) => {
        stderr += error.message;
      });
      child.once('close', () => {
        registry.forget(resourceId);
        if (byPid !== undefined) registry.forget(byPid);
        if (said.started === undefined) {
          reject(
            new Error(
              `${this.host}: ${spec.argv[0]} did not start: ${stderr.trim() || 'docker exec ended first'}`,
            ),
          );
          return;
        }
        resolveExit(said.ending());
      });
    });
  }

  async signal(proc: RuntimeProcess, signal: NodeJS.Signals): Promise<void> {
    const name = signal.replace(/^SIG/, '');
    const pidFile = (proc as Partial<DockerProcess>).pidFile;
    await this.shell(
      pidFile !== undefined
        ? killGroupScript(pidFile, name)
        : `kill -s ${name} -- -${proc.pgid} 2>/dev/null || true`,
    );
  }

  get(path: string): Promise<Buffer> {
    return this.must(`cat ${shellQuote(path)}`);
  }

  /** Through `docker exec -i … cat` (`docker cp` does not see a tmpfs mounted in the container). */
  async put(path: string, localFile: string): Promise<void> {
    const script = `cat > ${shellQuote(path)}`;
    const result = await docker(this.endpoint, this.execArgv(script, true), { inputFile: localFile });
    if (result.code !== 0) {
      throw new Error(
        `${this.host}: cannot upload ${localFile} to ${path} (exit ${result.code}): ${result.stderr.trim()}`,
      );
    }
  }

  close(): Promise<void> {
    this.shells.close();
    return Promise.resolve();
  }
}
