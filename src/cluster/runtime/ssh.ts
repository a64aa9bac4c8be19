import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { Client, type ClientChannel, type ConnectConfig, type SFTPWrapper } from 'ssh2';

import { sleep, wallClockNs } from '../../core/clock.js';
import type { ResourceRegistry } from '../resources.js';
import { ChannelLimit } from './_internals/channel-limit.js';
import { type HostKeyChecking, verifyHostKey } from './known-hosts.js';
import { emptyScript, mkdirScript, removeScript } from './_internals/file-scripts.js';
import {
  groupStartScript,
  GroupStartReader,
  killGroupByPidScript,
  killGroupScript,
} from './_internals/group-shell.js';
import { ShellPool, ShellSession } from './_internals/shell-session.js';
import { FollowedBytes, tailFollowScript } from './_internals/tail-follow.js';
import { shellLine, shellQuote } from '../../core/shell.js';
import type {
  ExecResult,
  FileStream,
  NodeRuntime,
  ProcessEnd,
  RuntimeProcess,
  StartSpec,
} from './runtime.js';

/** How to reach one host: Jepsen's fields (username, private key, port, host key checking). */
export interface SshTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** A private key file; the SSH agent (`SSH_AUTH_SOCK`) when absent. */
  readonly privateKey?: string | undefined;
  readonly knownHosts: string;
  readonly strictHostKeyChecking: HostKeyChecking;
}

/** A host that could not be used, with what to do about it (one line). */
export class HostError extends Error {
  constructor(
    readonly host: string,
    reason: string,
  ) {
    super(`host ${host}: ${reason}`);
    this.name = 'HostError';
  }
}

/** Below OpenSSH's MaxSessions (10): a connection holds at most this many channels at once. */
export const DEFAULT_MAX_CHANNELS = 8;
/** Shells kept open per host for short commands (signals, iptables, file tests). */
const SHELLS = 2;
const CHANNEL_OPEN_ATTEMPTS = 5;
const CHANNEL_RETRY_MS = 100;
const READY_TIMEOUT_MS = 10_000;
const EXEC_TIMEOUT_MS = 30_000;
/** Without GNU tail on the host, a followed file is read over SFTP this often. */
const STREAM_POLL_MS = 100;
/** Files followed per channel: one on its stdout, one on its stderr. */
const FILES_PER_TAIL_CHANNEL = 2;
const MARKER_BYTES = 16;
const STREAM_CHUNK_BYTES = 64 * 1024;
/** How long `stop` of a streaming command waits for its channel to close after the kill. */
const STOP_WAIT_MS = 5_000;

/** A long-lived command whose output streams back (`startStreaming`). */
export interface StreamingProcess {
  readonly pid: number;
  /** Resolves when its channel closes (it ended, or the connection went). */
  readonly ended: Promise<void>;
  /** Ends its process group on the host and waits for the channel to close. */
  stop(): Promise<void>;
}

/** A command attached to its exec channel (`attach`): its stdin is the channel's. */
export interface AttachedCommand {
  /** Its exit code once its channel has closed; null when it ended on a signal or the connection went. */
  readonly exited: Promise<number | null>;
  /** Ends its stdin (EOF), as a closed pipe does; the command decides what that means. */
  closeInput(): void;
}

/** A file asked to be followed, until its channel (or polling) is set up. */
interface TailMember {
  readonly path: string;
  readonly onData: (chunk: Buffer) => void;
  readonly started: Promise<FileStream>;
  resolveStarted(stream: FileStream): void;
}

interface SshProcess extends RuntimeProcess {
  readonly pidFile: string;
}

/** The shell text that signals the group a pid file names (shared with the other remote runtimes). */
export { killGroupScript };

/**
 * A host reached over SSH (the `ssh2` library): one connection, at most `maxChannels` channels
 * open on it at once (OpenSSH resets what is past its MaxSessions), a failed channel open tried
 * again. Commands run as root: directly when the user is root, else through `sudo -n`.
 */
export class SshRuntime implements NodeRuntime {
  readonly kind = 'ssh' as const;
  readonly host: string;
  private sftpSession: Promise<SFTPWrapper> | undefined;
  private nextPidFile = 0;
  private closed = false;
  /** Whether the host has GNU tail (asked once, at the first `stream`). */
  private gnuTail: Promise<boolean> | undefined;
  /** Files asked to be followed in this turn of the event loop, to share tail channels. */
  private toFollow: TailMember[] = [];
  /** Short commands run on these (see `ShellPool`). */
  private readonly shells = new ShellPool(SHELLS, (onClosed) => this.openShell(onClosed));

  private constructor(
    readonly target: SshTarget,
    private readonly client: Client,
    private readonly limit: ChannelLimit,
    /** Whether commands go through `sudo -n`. */
    readonly sudo: boolean,
    /** Where the tails that follow files are recorded (a run's registry), when there is one. */
    private readonly registry?: ResourceRegistry,
  ) {
    this.host = target.host;
  }

  /** Connects, checking the host key, and finds out how to be root there; a `HostError` says what is wrong. */
  static async connect(
    target: SshTarget,
    maxChannels = DEFAULT_MAX_CHANNELS,
    registry?: ResourceRegistry,
  ): Promise<SshRuntime> {
    const client = new Client();
    let refusal: string | undefined;
    const config: ConnectConfig = {
      host: target.host,
      port: target.port,
      username: target.username,
      readyTimeout: READY_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => {
        const verdict = verifyHostKey(
          target.knownHosts,
          target.host,
          target.port,
          key,
          target.strictHostKeyChecking,
        );
        if (!verdict.ok) refusal = verdict.reason;
        return verdict.ok;
      },
    };
    if (target.privateKey !== undefined) {
      try {
        config.privateKey = readFileSync(target.privateKey);
      } catch {
        throw new HostError(
          target.host,
          `cannot read the private key ${target.privateKey}: give a readable key file with --ssh-private-key`,
        );
      }
    } else if (process.env.SSH_AUTH_SOCK !== undefined) {
      config.agent = process.env.SSH_AUTH_SOCK;
    } else {
      throw new HostError(
        target.host,
        'no private key and no SSH agent: give --ssh-private-key FILE or start ssh-agent (SSH_AUTH_SOCK)',
      );
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error & { level?: string; code?: string }): void => {
        client.end();
        reject(new HostError(target.host, connectFailure(target, error, refusal)));
      };
      client.once('ready', () => {
        client.off('error', onError);
        client.on('error', () => {
          // a dropped connection ends its channels, which say so
        });
        resolve();
      });
      client.once('error', onError);
      client.connect(config);
    });
    const limit = new ChannelLimit(maxChannels);
    const probe = new SshRuntime(target, client, limit, false, registry);
    // On channels of their own: a kept shell would be the probe's user's, not root's.
    const id = await probe.shellOnChannel('id -u', EXEC_TIMEOUT_MS);
    if (id.stdout.trim() === '0') return probe;
    const sudo = await probe.shellOnChannel('sudo -n true', EXEC_TIMEOUT_MS);
    if (sudo.code !== 0) {
      client.end();
      throw new HostError(
        target.host,
        `user ${target.username} is not root and \`sudo -n\` fails (${sudo.stderr.trim() || `exit ${sudo.code}`}): connect as root (--username root) or allow ${target.username} passwordless sudo`,
      );
    }
    return new SshRuntime(target, client, limit, true, registry);
  }

  /** An exec channel, retried when the server refuses to open it (MaxSessions reached). */
  private async channel(command: string): Promise<{ stream: ClientChannel; release: () => void }> {
    const release = await this.limit.acquire();
    for (let attempt = 1; ; attempt++) {
      try {
        const stream = await new Promise<ClientChannel>((resolve, reject) => {
          this.client.exec(command, (error, stream) => {
            if (error) reject(error);
            else resolve(stream);
          });
        });
        return { stream, release };
      } catch (error) {
        if (this.closed || attempt >= CHANNEL_OPEN_ATTEMPTS) {
          release();
          throw new HostError(this.host, `cannot open an SSH channel: ${(error as Error).message}`);
        }
        await sleep(CHANNEL_RETRY_MS * attempt);
      }
    }
  }

  /** `command` (shell text) as root. */
  private asRoot(command: string): string {
    return this.sudo ? `sudo -n sh -c ${shellQuote(command)}` : command;
  }

  private async openShell(onClosed: () => void): Promise<ShellSession> {
    const { stream, release } = await this.channel(this.asRoot('exec sh'));
    return new ShellSession({
      write: (text) => {
        stream.write(text);
      },
      onStdout: (l) => {
        stream.on('data', l);
      },
      onStderr: (l) => {
        stream.stderr.on('data', l);
      },
      onClose: (l) => {
        stream.on('close', () => {
          release();
          l();
          onClosed();
        });
      },
      close: () => {
        stream.close();
      },
    });
  }

  /** Runs shell text as root to completion: on a kept shell, else on a channel of its own. */
  async shell(command: string, timeoutMs = EXEC_TIMEOUT_MS): Promise<ExecResult> {
    return (await this.shells.run(command, timeoutMs)) ?? this.shellOnChannel(command, timeoutMs);
  }

  /** Runs shell text as root on an exec channel of its own. */
  private async shellOnChannel(command: string, timeoutMs: number): Promise<ExecResult> {
    const { stream, release } = await this.channel(this.asRoot(command));
    return new Promise((resolve) => {
      let stdout = '';
      let stderr = '';
      let code = 1;
      const timer = setTimeout(() => {
        stderr += `timed out after ${timeoutMs} ms`;
        stream.close();
      }, timeoutMs);
      stream.on('data', (d: Buffer) => (stdout += d.toString()));
      stream.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      stream.on('exit', (c: number | null) => {
        if (typeof c === 'number') code = c;
      });
      stream.on('close', () => {
        clearTimeout(timer);
        release();
        resolve({ code, stdout, stderr });
      });
    });
  }

  exec(argv: readonly string[], options: { readonly timeoutMs?: number } = {}): Promise<ExecResult> {
    return this.shell(shellLine(argv), options.timeoutMs);
  }

  private async must(command: string): Promise<string> {
    const result = await this.shell(command);
    if (result.code !== 0) {
      throw new HostError(this.host, `\`${command}\` failed (exit ${result.code}): ${result.stderr.trim()}`);
    }
    return result.stdout;
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
      opened = await this.channel(this.asRoot(command));
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

  /**
   * Reads the host's wall clock `count` times in one shell (`read; date +%s%N` in a loop), each
   * reading bracketed by this machine's wall clock when asked and when answered: the shell is
   * started once, so a round trip is the channel's, not a process start's.
   */
  async clockReadings(
    count: number,
  ): Promise<{ readonly sentNs: number; readonly hostNs: number; readonly receivedNs: number }[]> {
    const { stream, release } = await this.channel(
      this.asRoot(`i=0; while [ $i -lt ${count} ] && read x; do date +%s%N; i=$((i+1)); done`),
    );
    const readings: { sentNs: number; hostNs: number; receivedNs: number }[] = [];
    try {
      let buffered = '';
      let answered: ((line: string) => void) | undefined;
      stream.on('data', (d: Buffer) => {
        buffered += d.toString();
        const end = buffered.indexOf('\n');
        if (end >= 0 && answered) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          answered(line);
        }
      });
      const closed = new Promise<string>((resolve) => {
        stream.once('close', () => {
          resolve('');
        });
      });
      for (let i = 0; i < count; i++) {
        const reply = new Promise<string>((resolve) => (answered = resolve));
        const sentNs = wallClockNs();
        stream.write('\n');
        const line = await Promise.race([reply, closed, sleep(EXEC_TIMEOUT_MS).then(() => '')]);
        const receivedNs = wallClockNs();
        const hostNs = Number(line.trim());
        if (line === '' || !Number.isFinite(hostNs)) break;
        readings.push({ sentNs, hostNs, receivedNs });
      }
    } finally {
      stream.end();
      stream.close();
      release();
    }
    return readings;
  }

  /**
   * Starts a long-lived command whose stdout is data (e.g. `tcpdump -w -`), streamed back over its
   * exec channel to `onStdout`; stderr lines go to `onStderr`. It leads its own process group, and
   * is recorded as a node is: by a pid file named before it runs, then by pid and start time (sent
   * on stderr first, as stdout is the data). `stop` ends the group and forgets it; until then
   * cleanup ends it.
   */
  async startStreaming(
    argv: readonly string[],
    pidFile: string,
    registry: ResourceRegistry,
    label: string,
    onStdout: (chunk: Buffer) => void,
    onStderr: (text: string) => void,
  ): Promise<StreamingProcess> {
    const resourceId = registry.record({
      kind: 'remote',
      target: this.target,
      undo: killGroupScript(pidFile),
      label: `process group on ${this.host} (${label})`,
    });
    const inner =
      `start=$(cut -d' ' -f22 /proc/$$/stat); echo "$$ $start" > ${shellQuote(pidFile)}; echo "pid $$ $start" >&2; ` +
      `exec ${shellLine(argv)} </dev/null`;
    let opened: { stream: ClientChannel; release: () => void };
    try {
      opened = await this.channel(this.asRoot(`exec setsid -w sh -c ${shellQuote(inner)}`));
    } catch (error) {
      registry.release(resourceId);
      throw error;
    }
    const { stream, release } = opened;
    let closed = false;
    const ended = new Promise<void>((resolve) => {
      stream.on('close', () => {
        closed = true;
        release();
        resolve();
      });
    });
    stream.on('data', onStdout);
    return new Promise((resolve, reject) => {
      let err = '';
      let started = false;
      stream.stderr.on('data', (d: Buffer) => {
        const text = d.toString();
        if (started) {
          onStderr(text);
          return;
        }
        err += text;
        const match = /^pid (\d+) (\d+)$/m.exec(err);
        if (!match) return;
        started = true;
        const pid = Number(match[1]);
        const startTime = match[2];
        const byPid = registry.record({
          kind: 'remote',
          target: this.target,
          undo: killGroupByPidScript(pid, startTime),
          label: `process group ${pid} on ${this.host} (${label})`,
        });
        registry.forget(resourceId);
        const rest = err.slice(match.index + match[0].length).replace(/^\n/, '');
        if (rest !== '') onStderr(rest);
        resolve({
          pid,
          ended,
          stop: async () => {
            if (!closed && !this.closed) await this.shell(killGroupByPidScript(pid, startTime));
            await Promise.race([ended, sleep(STOP_WAIT_MS)]);
            // Ended, or its connection is gone: the registry's own connection ends it at cleanup.
            if (closed) registry.forget(byPid);
          },
        });
      });
      void ended.then(() => {
        if (started) return;
        registry.forget(resourceId);
        reject(
          new HostError(this.host, `${argv[0]} did not start: ${err.trim() || 'the channel closed first'}`),
        );
      });
    });
  }

  /**
   * Runs `argv` (as root, with `env` added) on its own exec channel and keeps it attached: its
   * stdout and stderr stream to `onOutput`, its stdin is the channel's, so it reads EOF when
   * `closeInput` is called or the connection drops (the fuzzer killed outright). Nothing is
   * recorded: a command run this way is one that stops itself at EOF.
   */
  async attach(
    argv: readonly string[],
    env: Readonly<Record<string, string>>,
    onOutput: (chunk: Buffer) => void,
  ): Promise<AttachedCommand> {
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
    const { stream, release } = await this.channel(
      this.asRoot(`exec env ${assignments.join(' ')} ${shellLine(argv)}`),
    );
    stream.on('data', onOutput);
    stream.stderr.on('data', onOutput);
    const exited = new Promise<number | null>((resolve) => {
      let code: number | null = null;
      stream.on('exit', (exitCode: number | null) => {
        code = typeof exitCode === 'number' ? exitCode : null;
      });
      stream.on('close', () => {
        release();
        resolve(code);
      });
    });
    return { exited, closeInput: () => void stream.end() };
  }

  async signal(proc: RuntimeProcess, signal: NodeJS.Signals): Promise<void> {
    const name = signal.replace(/^SIG/, '');
    const pidFile = (proc as Partial<SshProcess>).pidFile;
    if (pidFile !== undefined) await this.shell(killGroupScript(pidFile, name));
    else await this.shell(`kill -s ${name} -- -${proc.pgid} 2>/dev/null || true`);
  }

  private sftp(): Promise<SFTPWrapper> {
    this.sftpSession ??= (async () => {
      await this.limit.acquire(); // held for the connection's life
      return new Promise<SFTPWrapper>((resolve, reject) => {
        this.client.sftp((error, sftp) => {
          if (error) reject(error);
          else resolve(sftp);
        });
      });
    })();
    return this.sftpSession;
  }

  async readFile(path: string): Promise<Buffer> {
    const sftp = await this.sftp();
    return new Promise((resolve, reject) => {
      sftp.readFile(path, (error: Error | undefined, data: Buffer) => {
        if (error) reject(error);
        else resolve(data);
      });
    });
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    const sftp = await this.sftp();
    await new Promise<void>((resolve, reject) => {
      sftp.writeFile(path, data, (error) => {
        if (error) reject(error);
        else resolve();
      });
    });
  }

  async mkdir(path: string): Promise<void> {
    await this.must(mkdirScript(path));
  }

  async remove(path: string): Promise<void> {
    await this.must(removeScript(path));
  }

  async empty(path: string): Promise<void> {
    await this.must(emptyScript(path));
  }

  /**
   * Follows `path` from its start as it grows, binary-safe: by GNU `tail -F` on a long-lived exec
   * channel (`tailFollowScript`), files asked for in the same turn sharing channels two by two (a
   * node's stdout, stderr and probe file hold two channels, not three), each append sent as soon as
   * it is written; on a host without GNU tail, by SFTP reads every 100 ms. `stop` makes the tail
   * read what is left and exit, and resolves once those bytes are delivered. On truncation the
   * bytes go on from the file's new start; a replaced file (rotation) is followed from its start.
   */
  stream(path: string, onData: (chunk: Buffer) => void): FileStream {
    let started!: (stream: FileStream) => void;
    const member: TailMember = {
      path,
      onData,
      started: new Promise((resolve) => (started = resolve)),
      resolveStarted: (stream) => {
        started(stream);
      },
    };
    this.toFollow.push(member);
    if (this.toFollow.length === 1) {
      setImmediate(() => {
        const members = this.toFollow;
        this.toFollow = [];
        void this.followAll(members);
      });
    }
    return { stop: async () => (await member.started).stop() };
  }

  /** Whether the host has GNU tail (`-F`, `--pid`), asked once. */
  private hasGnuTail(): Promise<boolean> {
    this.gnuTail ??= this.shell('tail --version 2>/dev/null | head -n 1').then(
      (r) => r.code === 0 && r.stdout.includes('GNU coreutils'),
      () => false,
    );
    return this.gnuTail;
  }

  private async followAll(members: readonly TailMember[]): Promise<void> {
    if (!(await this.hasGnuTail())) {
      for (const m of members) m.resolveStarted(this.pollStream(m.path, m.onData));
      return;
    }
    for (let i = 0; i < members.length; i += FILES_PER_TAIL_CHANNEL) {
      const group = members.slice(i, i + FILES_PER_TAIL_CHANNEL);
      void this.tailChannel(group).then(
        (streams) => {
          group.forEach((m, j) => {
            m.resolveStarted(streams[j]);
          });
        },
        () => {
          // no channel (the connection is gone or refuses one): read what can be read
          for (const m of group) m.resolveStarted(this.pollStream(m.path, m.onData));
        },
      );
    }
  }

  /**
   * One channel following one or two files. The tail's process group is recorded by pid and start
   * time once it says them, so `mallory cleanup` ends it after a killed run; before that, and on
   * any lost connection, the channel's end makes the shell stop its tails.
   */
  private async tailChannel(group: readonly TailMember[]): Promise<FileStream[]> {
    const marker = `mallory-tail-end-${randomBytes(MARKER_BYTES).toString('hex')}`;
    const script = tailFollowScript(
      group.map((m) => m.path),
      marker,
    );
    const { stream, release } = await this.channel(this.asRoot(`exec setsid -w sh -c ${shellQuote(script)}`));
    const files = group.map((m) => new FollowedBytes(marker, m.onData));
    let header: Buffer | undefined = Buffer.alloc(0);
    let leader: { readonly pid: number; readonly start: string } | undefined;
    let recorded: number | undefined;
    let closed = false;
    const ended = new Promise<void>((resolve) => {
      stream.on('close', () => {
        closed = true;
        release();
        for (const f of files) f.end();
        if (recorded !== undefined) this.registry?.forget(recorded);
        resolve();
      });
    });
    stream.on('data', (d: Buffer) => {
      let chunk = d;
      if (header !== undefined) {
        const all = Buffer.concat([header, d]);
        const newline = all.indexOf('\n');
        if (newline < 0) {
          header = all;
          return;
        }
        header = undefined;
        const said = /^pid (\d+) (\d+)$/.exec(all.subarray(0, newline).toString());
        if (said) {
          leader = { pid: Number(said[1]), start: said[2] };
          recorded = this.registry?.record({
            kind: 'remote',
            target: this.target,
            undo: killGroupByPidScript(leader.pid, leader.start),
            label: `tail ${leader.pid} on ${this.host} (${group.map((m) => m.path).join(', ')})`,
          });
        }
        chunk = all.subarray(newline + 1);
      }
      files[0].push(chunk);
    });
    stream.stderr.on('data', (d: Buffer) => {
      files[1]?.push(d);
    });
    const kill = async (): Promise<void> => {
      if (closed) return;
      if (leader !== undefined && !this.closed) {
        await this.shell(killGroupByPidScript(leader.pid, leader.start)).catch(() => undefined);
      }
      stream.close();
      await Promise.race([ended, sleep(STOP_WAIT_MS)]);
    };
    let stopped = 0;
    return files.map((file, i) => {
      let stopping: Promise<void> | undefined;
      const stop = async (): Promise<void> => {
        file.stop();
        if (!closed) stream.write(`${i + 1}\n`);
        const inTime = await Promise.race([
          file.finished.then(() => true),
          sleep(STOP_WAIT_MS).then(() => false),
        ]);
        if (!inTime) await kill();
        stopped++;
        if (stopped < files.length || closed) return;
        stream.end();
        const closedInTime = await Promise.race([
          ended.then(() => true),
          sleep(STOP_WAIT_MS).then(() => false),
        ]);
        if (!closedInTime) await kill();
      };
      return { stop: () => (stopping ??= stop()) };
    });
  }

  /** Reads what is appended to `path` over SFTP every `STREAM_POLL_MS` (hosts without GNU tail). */
  private pollStream(path: string, onData: (chunk: Buffer) => void): FileStream {
    let offset = 0;
    let stopped = false;
    let handle: Buffer | undefined;
    const buffer = Buffer.alloc(STREAM_CHUNK_BYTES);
    const drain = async (): Promise<void> => {
      const sftp = await this.sftp();
      if (handle === undefined) {
        handle = await new Promise<Buffer | undefined>((resolve) => {
          sftp.open(path, 'r', (error, h) => {
            resolve(error ? undefined : h);
          });
        });
        if (handle === undefined) return;
      }
      const open = handle;
      for (;;) {
        const n = await new Promise<number>((resolve) => {
          sftp.read(open, buffer, 0, buffer.length, offset, (error, bytesRead) => {
            resolve(error ? 0 : bytesRead);
          });
        });
        if (n <= 0) return;
        offset += n;
        onData(Buffer.from(buffer.subarray(0, n)));
      }
    };
    const loop = (async () => {
      while (!stopped && !this.closed) {
        await drain().catch(() => undefined);
        await sleep(STREAM_POLL_MS);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await loop;
        if (this.closed) return;
        await drain().catch(() => undefined);
        const h = handle;
        if (h !== undefined) {
          const sftp = await this.sftp();
          await new Promise<void>((resolve) => {
            sftp.close(h, () => {
              resolve();
            });
          });
        }
      },
    };
  }

  /**
   * Copies a local file to the host with its mode, through a temp file renamed over `path`: a
   * reader never sees half of it, and a host that shares this machine's files (the same path on
   * both) gets the file back whole instead of truncating it while it is read.
   */
  async upload(localPath: string, path: string): Promise<void> {
    const sftp = await this.sftp();
    const mode = statSync(localPath).mode & 0o7777;
    const temp = `${path}.mallory-upload-${process.pid}`;
    await new Promise<void>((resolve, reject) => {
      sftp.fastPut(localPath, temp, { mode }, (error) => {
        if (error) reject(error);
        else resolve();
      });
    });
    await this.must(`mv -f ${shellQuote(temp)} ${shellQuote(path)}`);
  }

  async isRunnable(command: string): Promise<boolean> {
    const test = command.includes('/')
      ? `test -x ${shellQuote(command)}`
      : `command -v ${shellQuote(command)}`;
    return (await this.shell(`${test} >/dev/null 2>&1`)).code === 0;
  }

  /** Whether a file or dir exists on the host. */
  async exists(path: string): Promise<boolean> {
    return (await this.shell(`test -e ${shellQuote(path)}`)).code === 0;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.shells.close();
    return new Promise((resolve) => {
      this.client.once('close', () => {
        resolve();
      });
      this.client.end();
    });
  }
}

function connectFailure(
  target: SshTarget,
  error: Error & { level?: string; code?: string },
  refusal: string | undefined,
): string {
  if (refusal !== undefined) return refusal;
  if (error.code === 'ECONNREFUSED') {
    return `connection refused on port ${target.port}: start sshd there, or give the port it listens on (--ssh-port)`;
  }
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
    return `no such host: check the name in --hosts`;
  }
  if (error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH' || error.code === 'ETIMEDOUT') {
    return `unreachable (${error.code}): check the address and the network to it`;
  }
  if (error.level === 'client-authentication') {
    return `the key was rejected for user ${target.username}: add its public key to ~${target.username}/.ssh/authorized_keys there, or give the right --ssh-private-key / --username`;
  }
  if (error.level === 'client-timeout') {
    return `no SSH answer within ${READY_TIMEOUT_MS} ms: is sshd running on port ${target.port}?`;
  }
  return `cannot connect over SSH: ${error.message}`;
}
