import { ShellPool, ShellSession } from './_internals/shell-session.js';
import type { ExecResult } from './runtime.js';
import { EXEC_TIMEOUT_MS, HostError, type SshConnection } from './ssh-connection.js';

/** Shells kept open per host for short commands (signals, iptables, file tests). */
const SHELLS = 2;

/**
 * The shells kept open on a host for short commands, so that one costs a round trip, not a channel
 * open (see `ShellPool`); a command finding none idle runs on an exec channel of its own.
 */
export class SshShells {
  private readonly pool = new ShellPool(SHELLS, (onClosed) => this.openShell(onClosed));

  constructor(private readonly connection: SshConnection) {}

  private async openShell(onClosed: () => void): Promise<ShellSession> {
    const { stream, release } = await this.connection.channel(this.connection.asRoot('exec sh'));
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
  async run(command: string, timeoutMs = EXEC_TIMEOUT_MS): Promise<ExecResult> {
    return (await this.pool.run(command, timeoutMs)) ?? this.connection.shellOnChannel(command, timeoutMs);
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
