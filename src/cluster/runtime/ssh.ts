import { dirname, join } from 'node:path';

import type { ClientChannel } from 'ssh2';

import { shellLine } from '../../core/shell.js';
import type { ResourceRegistry } from '../resources.js';
import {
  groupStartScript,
  GroupStartReader,
  killGroupByPidScript,
  killGroupScript,
} from './_internals/group-shell.js';
import { isLive } from './_internals/live-exec.js';
import type { RuntimePlace } from './undo-on.js';
import type {
  ExecOptions,
  ExecResult,
  NodeRuntime,
  ProcessEnd,
  RuntimeCapabilities,
  RuntimeProcess,
  StartSpec,
} from './runtime.js';
import {
  DEFAULT_MAX_CHANNELS,
  EXEC_TIMEOUT_MS,
  HostError,
  SshConnection,
  type SshTarget,
} from './ssh-connection.js';
import { type AttachedCommand, SshAttached } from './ssh-attached.js';
import { SshShells } from './ssh-shells.js';
import { SshTransfer } from './ssh-transfer.js';

export { DEFAULT_MAX_CHANNELS, HostError, type SshTarget } from './ssh-connection.js';
export type { AttachedCommand } from './ssh-attached.js';

/**
 * A host over SSH has everything but this machine's files: its own tools (netem, FUSE, libfaketime)
 * are looked for on each host before the run (`planHosts`).
 */
export const SSH_CAPABILITIES: RuntimeCapabilities = {
  sharedFilesystem: false,
  sharedClock: false,
  netem: true,
  fuse: true,
  libfaketime: true,
  checkpoints: true,
  membership: true,
  commandLeadsGroup: false,
};

/**
 * A host over SSH as the rest of the fuzzer sees it: a node runtime, with what only a host reached
 * over SSH offers (how to reach it again, shell text run as root, commands attached to a channel).
 */
export interface SshHost extends NodeRuntime {
  readonly target: SshTarget;
  /** Whether commands go through `sudo -n`. */
  readonly sudo: boolean;
  shell(command: string, timeoutMs?: number): Promise<ExecResult>;
  attach(
    argv: readonly string[],
    env: Readonly<Record<string, string>>,
    onOutput: (chunk: Buffer) => void,
  ): Promise<AttachedCommand>;
}

/**
 * Connects to a host over SSH, checking its key, and finds out how to be root there; a `HostError`
 * says what is wrong.
 */
export function connectSshHost(target: SshTarget, maxChannels = DEFAULT_MAX_CHANNELS): Promise<SshHost> {
  return SshRuntime.connect(target, maxChannels);
}

interface SshProcess extends RuntimeProcess {
  readonly pidFile: string;
}

/** The shell text that signals the group a pid file names (shared with the other remote runtimes). */
export { killGroupScript };

/**
 * A host reached over SSH: its connection (`SshConnection`), the shells kept open on it for short
 * commands (`SshShells`) and bytes moved over SFTP (`SshTransfer`); the processes it starts lead
 * their own process groups. Files followed as they grow are `follow.ts`'s, over `exec`.
 */
export class SshRuntime implements SshHost {
  readonly place: RuntimePlace;
  readonly host: string;
  readonly capabilities = SSH_CAPABILITIES;
  readonly target: SshTarget;
  /** Whether commands go through `sudo -n`. */
  readonly sudo: boolean;
  private nextPidFile = 0;
  private readonly shells: SshShells;
  private readonly transfer: SshTransfer;
  private readonly attached: SshAttached;

  private constructor(private readonly connection: SshConnection) {
    this.host = connection.host;
    this.place = { kind: 'ssh', target: connection.target };
    this.target = connection.target;
    this.sudo = connection.sudo;
    this.shells = new SshShells(connection);
    this.transfer = new SshTransfer(connection, this.shells);
    this.attached = new SshAttached(connection);
  }

  /**
   * Connects, checking the host key, and finds out how to be root there; a `HostError` says what is
   * wrong.
   */
  static async connect(target: SshTarget, maxChannels = DEFAULT_MAX_CHANNELS): Promise<SshRuntime> {
    return new SshRuntime(await SshConnection.connect(target, maxChannels));
  }

  /** Runs shell text as root to completion: on a kept shell, else on a channel of its own. */
  shell(command: string, timeoutMs = EXEC_TIMEOUT_MS): Promise<ExecResult> {
    return this.shells.run(command, timeoutMs);
  }

  /** On a kept shell; with `input`, or live (`ExecOptions`), on an exec channel of its own. */
  exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    if (options.input === undefined && !isLive(options))
      return this.shell(shellLine(argv), options.timeoutMs);
    return this.connection.shellOnChannel(shellLine(argv), options);
  }

  /**
   * Starts the command under a shell that leads a new session (so its own process group) and
   * waits for it, the channel open meanwhile: its pid comes first, its exit status last. The pid
   * and the leader's start time go to a pid file the registry names before anything runs, so
   * `mallory cleanup` ends the group even when the fuzzer was killed in between.
   */
  async start(spec: StartSpec, registry: ResourceRegistry): Promise<RuntimeProcess> {
    const pidFile = join(dirname(spec.stdout), `.pid-${process.pid}-${this.nextPidFile++}`);
    const resourceId = registry.record({
      kind: 'remote',
      target: this.target,
      undo: killGroupScript(pidFile),
      label: `process group on ${this.host} (${spec.label})`,
    });
    const command = groupStartScript(spec, pidFile);
    let opened: { stream: ClientChannel; release: () => void };
    try {
      opened = await this.connection.channel(this.connection.asRoot(command));
    } catch (error) {
      registry.release(resourceId);
      throw error;
    }
    const { stream, release } = opened;
    return new Promise((resolve, reject) => {
      const said = new GroupStartReader();
      let stderr = '';
      let byPid: number | undefined;
      let resolveExit!: (end: ProcessEnd) => void;
      const exited = new Promise<ProcessEnd>((r) => (resolveExit = r));
      stream.on('data', (d: Buffer) => {
        const before = said.started;
        said.feed(d);
        const started = said.started;
        if (before === undefined && started !== undefined) {
          // Named by pid and start time too: the pid file may go before the group does (the run's
          // dir removed first, or shared between hosts).
          byPid = registry.record({
            kind: 'remote',
            target: this.target,
            undo: killGroupByPidScript(started.pid, started.start),
            label: `process group ${started.pid} on ${this.host} (${spec.label})`,
          });
          registry.forget(resourceId);
          const proc: SshProcess = {
            pid: started.pid,
            pgid: started.pid,
            resourceId: byPid,
            exited,
            pidFile,
          };
          resolve(proc);
        }
      });
      stream.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      stream.on('close', () => {
        release();
        registry.forget(resourceId);
        if (byPid !== undefined) registry.forget(byPid);
        if (said.started === undefined) {
          reject(
            new HostError(
              this.host,
              `${spec.argv[0]} did not start: ${stderr.trim() || 'the channel closed first'}`,
            ),
          );
          return;
        }
        resolveExit(said.ending());
      });
    });
  }

  /** Runs `argv` on an exec channel of its own, its stdin the channel's (see `SshAttached.attach`). */
  attach(
    argv: readonly string[],
    env: Readonly<Record<string, string>>,
    onOutput: (chunk: Buffer) => void,
  ): Promise<AttachedCommand> {
    return this.attached.attach(argv, env, onOutput);
  }

  async signal(proc: RuntimeProcess, signal: NodeJS.Signals): Promise<void> {
    const name = signal.replace(/^SIG/, '');
    const pidFile = (proc as Partial<SshProcess>).pidFile;
    if (pidFile !== undefined) await this.shells.run(killGroupScript(pidFile, name));
    else await this.shells.run(`kill -s ${name} -- -${proc.pgid} 2>/dev/null || true`);
  }

  /** Over SFTP, with its mode, whole or not at all (see `SshTransfer`). */
  put(path: string, localFile: string): Promise<void> {
    return this.transfer.upload(localFile, path);
  }

  get(path: string): Promise<Buffer> {
    return this.transfer.readFile(path);
  }

  async close(): Promise<void> {
    await this.shells.killsEnded();
    return this.connection.close(() => {
      this.shells.close();
    });
  }
}
