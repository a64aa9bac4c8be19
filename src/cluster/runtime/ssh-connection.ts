import { readFileSync } from 'node:fs';

import { Client, type ClientChannel, type ConnectConfig, type SFTPWrapper } from 'ssh2';

import { sleep } from '../../core/clock.js';
import { shellQuote } from '../../core/shell.js';
import { ChannelLimit } from './_internals/channel-limit.js';
import { type HostKeyChecking, verifyHostKey } from './known-hosts.js';
import { feedInput } from './_internals/live-exec.js';
import type { ExecOptions, ExecResult } from './runtime.js';

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
const CHANNEL_OPEN_ATTEMPTS = 5;
const CHANNEL_RETRY_MS = 100;
const READY_TIMEOUT_MS = 10_000;
/** How long a short command may take before its channel is closed. */
export const EXEC_TIMEOUT_MS = 30_000;

/**
 * One SSH connection to a host (the `ssh2` library): at most `maxChannels` channels open on it at
 * once (OpenSSH resets what is past its MaxSessions), a failed channel open tried again. Commands
 * run as root: directly when the user is root, else through `sudo -n`.
 */
export class SshConnection {
  readonly host: string;
  private sftpSession: Promise<SFTPWrapper> | undefined;
  private isClosed = false;

  private constructor(
    readonly target: SshTarget,
    private readonly client: Client,
    private readonly limit: ChannelLimit,
    /** Whether commands go through `sudo -n`. */
    readonly sudo: boolean,
  ) {
    this.host = target.host;
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Connects, checking the host key, and finds out how to be root there; a `HostError` says what is wrong. */
  static async connect(target: SshTarget, maxChannels = DEFAULT_MAX_CHANNELS): Promise<SshConnection> {
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
    const probe = new SshConnection(target, client, limit, false);
    // On channels of their own: a kept shell would be the probe's user's, not root's.
    const id = await probe.shellOnChannel('id -u');
    if (id.stdout.trim() === '0') return probe;
    const sudo = await probe.shellOnChannel('sudo -n true');
    if (sudo.code !== 0) {
      client.end();
      throw new HostError(
        target.host,
        `user ${target.username} is not root and \`sudo -n\` fails (${sudo.stderr.trim() || `exit ${sudo.code}`}): connect as root (--username root) or allow ${target.username} passwordless sudo`,
      );
    }
    return new SshConnection(target, client, limit, true);
  }

  /** An exec channel, retried when the server refuses to open it (MaxSessions reached). */
  async channel(command: string): Promise<{ stream: ClientChannel; release: () => void }> {
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
        if (this.isClosed || attempt >= CHANNEL_OPEN_ATTEMPTS) {
          release();
          throw new HostError(this.host, `cannot open an SSH channel: ${(error as Error).message}`);
        }
        await sleep(CHANNEL_RETRY_MS * attempt);
      }
    }
  }

  /** `command` (shell text) as root. */
  asRoot(command: string): string {
    return this.sudo ? `sudo -n sh -c ${shellQuote(command)}` : command;
  }

  /**
   * Runs shell text as root on an exec channel of its own: `input` its stdin when given, its output
   * handed over as it comes when asked (`ExecOptions`), the channel closed when `signal` aborts or
   * the time is up (none for a command with `signal` unless given).
   */
  async shellOnChannel(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const { stream, release } = await this.channel(this.asRoot(command));
    return new Promise((resolve) => {
      let stdout = '';
      let stderr = '';
      let code = 1;
      const timeoutMs = options.timeoutMs ?? (options.signal ? undefined : EXEC_TIMEOUT_MS);
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              stderr += `timed out after ${timeoutMs} ms`;
              stream.close();
            }, timeoutMs);
      const abort = (): void => {
        stream.close();
      };
      options.signal?.addEventListener('abort', abort, { once: true });
      if (options.signal?.aborted) abort();
      const { onStdout, onStderr } = options;
      stream.on('data', (d: Buffer) => {
        if (onStdout) onStdout(d);
        else stdout += d.toString();
      });
      stream.stderr.on('data', (d: Buffer) => {
        if (onStderr) onStderr(d);
        else stderr += d.toString();
      });
      stream.on('exit', (c: number | null) => {
        if (typeof c === 'number') code = c;
      });
      const closed = new Promise<void>((done) => {
        stream.on('close', () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', abort);
          release();
          resolve({ code, stdout, stderr });
          done();
        });
      });
      feedInput(options.input, stream, closed);
    });
  }

  /** The connection's SFTP session, opened at the first use and held for the connection's life. */
  sftp(): Promise<SFTPWrapper> {
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

  /** Ends the connection: `beforeEnd` (closing what uses it) runs once it counts as closed. */
  close(beforeEnd: () => void = () => undefined): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    this.isClosed = true;
    beforeEnd();
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
