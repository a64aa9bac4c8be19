import { shellLine, shellQuote } from '../../core/shell.js';
import type { SshConnection } from './ssh-connection.js';

/** A command attached to its exec channel (`attach`): its stdin is the channel's. */
export interface AttachedCommand {
  /** Its exit code once its channel has closed; null when it ended on a signal or the connection went. */
  readonly exited: Promise<number | null>;
  /** Ends its stdin (EOF), as a closed pipe does; the command decides what that means. */
  closeInput(): void;
}

/** Commands that keep an exec channel of their own on a host while they run: a daemon whose stdin is the channel. */
export class SshAttached {
  constructor(private readonly connection: SshConnection) {}

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
