import { within } from '../../core/clock.js';
import {
  ANCHOR_COMMAND,
  guardLate,
  type HostClockAnchor,
  killGroupOf,
  readAnchor,
} from './_internals/late-guard.js';
import { ShellPool, ShellSession } from './_internals/shell-session.js';
import type { ExecResult } from './runtime.js';
import { EXEC_TIMEOUT_MS, HostError, type SshConnection } from './ssh-connection.js';

/** Shells kept open per host for short commands (signals, iptables, file tests). */
const SHELLS = 2;
/** How long a new shell may take to say its pid and the host's boot clock. */
const ANCHOR_TIMEOUT_MS = 10_000;
/** How long the kill of a timed-out command's shell may take (a channel's opening, then its run). */
const KILL_TIMEOUT_MS = 10_000;

/**
 * The shells kept open on a host for short commands, so that one costs a round trip, not a channel
 * open (see `ShellPool`); a command finding none idle runs on an exec channel of its own.
 *
 * A command the caller gave up on (its timeout passed) must not take effect later unseen — an
 * iptables rule added once a cut link comes back, after the run has healed: each command runs
 * only if the host starts it before its deadline on the host's boot clock (`guardLate`), and the
 * shell of one that timed out is killed with what it runs.
 */
export class SshShells {
  private readonly pool = new ShellPool(SHELLS, (onClosed) => this.openShell(onClosed));
  /** The host's boot clock against ours, read by the first shell (the most exact reading kept). */
  private anchor: HostClockAnchor | undefined;
  /** The kills of timed-out commands' shells under way. */
  private readonly kills = new Set<Promise<unknown>>();

  constructor(private readonly connection: SshConnection) {}

  private async openShell(onClosed: () => void): Promise<ShellSession> {
    const { stream, release } = await this.connection.channel(this.connection.asRoot('exec sh'));
    let pid: number | undefined;
    const session = new ShellSession({
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
      abandon: () => {
        if (pid !== undefined) this.kill(pid);
      },
    });
    const sentMs = performance.now();
    const read = readAnchor(await session.run(ANCHOR_COMMAND, ANCHOR_TIMEOUT_MS), sentMs, performance.now());
    if (read !== undefined) {
      pid = read.pid;
      if (this.anchor === undefined || read.anchor.errorMs < this.anchor.errorMs) this.anchor = read.anchor;
    }
    return session;
  }

  /** Kills the shell `pid` with the command it runs, on a channel of its own; nothing waits for it. */
  private kill(pid: number): void {
    const kill = this.connection
      .shellOnChannel(killGroupOf(pid), { timeoutMs: KILL_TIMEOUT_MS })
      .catch(() => undefined);
    this.kills.add(kill);
    void kill.finally(() => this.kills.delete(kill));
  }

  /**
   * Once the kills under way have ended (or `KILL_TIMEOUT_MS` has passed: a channel cannot be
   * opened over a cut link): what closes the connection waits for them.
   */
  async killsEnded(): Promise<void> {
    if (this.kills.size === 0) return;
    await within(Promise.all(this.kills), KILL_TIMEOUT_MS, undefined);
  }

  /** `command` guarded against running after `timeoutMs` from now, once the host's clock is read. */
  private guarded(command: string, timeoutMs: number): string {
    return this.anchor === undefined
      ? command
      : guardLate(command, this.anchor, performance.now(), timeoutMs);
  }

  /** Runs shell text as root to completion: on a kept shell, else on a channel of its own. */
  async run(command: string, timeoutMs = EXEC_TIMEOUT_MS): Promise<ExecResult> {
    return (
      (await this.pool.run(() => this.guarded(command, timeoutMs), timeoutMs)) ??
      this.connection.shellOnChannel(this.guarded(command, timeoutMs), { timeoutMs })
    );
  }

  /** Runs shell text as root and gives its stdout; a non-zero exit is a `HostError`. */
  async must(command: string): Promise<string> {
    const result = await this.run(command);
    if (result.code !== 0) {
      throw new HostError(
        this.connection.host,
        `\`${command}\` failed (exit ${result.code}): ${result.stderr.trim()}`,
      );
    }
    return result.stdout;
  }

  close(): void {
    this.pool.close();
  }
}
