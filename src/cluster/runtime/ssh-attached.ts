import type { ClientChannel } from 'ssh2';

import { wallClockNs, within } from '../../core/clock.js';
import { shellLine, shellQuote } from '../../core/shell.js';
import type { ResourceRegistry } from '../resources.js';
import { killGroupByPidScript, killGroupScript } from './_internals/group-shell.js';
import { EXEC_TIMEOUT_MS, HostError, type SshConnection } from './ssh-connection.js';
import type { SshShells } from './ssh-shells.js';

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

/**
 * Commands that keep an exec channel of their own on a host while they run: a clock read in a
 * loop, a stream of bytes (`tcpdump -w -`), a daemon whose stdin is the channel.
 */
export class SshAttached {
  constructor(
    private readonly connection: SshConnection,
    private readonly shells: SshShells,
  ) {}

  /**
   * Reads the host's wall clock `count` times in one shell (`read; date +%s%N` in a loop), each
   * reading bracketed by this machine's wall clock when asked and when answered: the shell is
   * started once, so a round trip is the channel's, not a process start's.
   */
  async clockReadings(
    count: number,
  ): Promise<{ readonly sentNs: number; readonly hostNs: number; readonly receivedNs: number }[]> {
    const { stream, release } = await this.connection.channel(
      this.connection.asRoot(`i=0; while [ $i -lt ${count} ] && read x; do date +%s%N; i=$((i+1)); done`),
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
        const line = await within(Promise.race([reply, closed]), EXEC_TIMEOUT_MS, '');
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
      target: this.connection.target,
      undo: killGroupScript(pidFile),
      label: `process group on ${this.connection.host} (${label})`,
    });
    const inner =
      `start=$(cut -d' ' -f22 /proc/$$/stat); echo "$$ $start" > ${shellQuote(pidFile)}; echo "pid $$ $start" >&2; ` +
      `exec ${shellLine(argv)} </dev/null`;
    let opened: { stream: ClientChannel; release: () => void };
    try {
      opened = await this.connection.channel(
        this.connection.asRoot(`exec setsid -w sh -c ${shellQuote(inner)}`),
      );
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
          target: this.connection.target,
          undo: killGroupByPidScript(pid, startTime),
          label: `process group ${pid} on ${this.connection.host} (${label})`,
        });
        registry.forget(resourceId);
        const rest = err.slice(match.index + match[0].length).replace(/^\n/, '');
        if (rest !== '') onStderr(rest);
        resolve({
          pid,
          ended,
          stop: async () => {
            if (!closed && !this.connection.closed)
              await this.shells.run(killGroupByPidScript(pid, startTime));
            await within(ended, STOP_WAIT_MS, undefined);
            // Ended, or its connection is gone: the registry's own connection ends it at cleanup.
            if (closed) registry.forget(byPid);
          },
        });
      });
      void ended.then(() => {
        if (started) return;
        registry.forget(resourceId);
        reject(
          new HostError(
            this.connection.host,
            `${argv[0]} did not start: ${err.trim() || 'the channel closed first'}`,
          ),
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
    const { stream, release } = await this.connection.channel(
      this.connection.asRoot(`exec env ${assignments.join(' ')} ${shellLine(argv)}`),
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
}
