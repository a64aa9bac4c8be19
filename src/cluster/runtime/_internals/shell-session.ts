import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';

import type { ExecResult } from '../runtime.js';

/** The two streams of a long-lived shell on the host: what is written goes to its stdin. */
export interface ShellChannel {
  write(text: string): void;
  onStdout(listener: (chunk: Buffer) => void): void;
  onStderr(listener: (chunk: Buffer) => void): void;
  /** Called once, when the shell is gone (it ended, or the connection dropped). */
  onClose(listener: () => void): void;
  close(): void;
  /** Called when a command outlived its timeout, before `close`: stops it taking effect later. */
  abandon?(): void;
}

interface Pending {
  readonly seq: number;
  readonly resolve: (result: ExecResult) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * One shell kept open on a host, running one command at a time: each command in a subshell (so
 * its `exit` or `cd` stays its own), its stdin empty, and after it a marker line on stdout with
 * its exit status and one on stderr. Opening an SSH session costs sshd a fork and a login's set-up
 * (hundreds of ms on a loaded host); a command on the open shell costs a subshell (under a ms).
 *
 * A command that outlives its timeout ends the session (its answer says so); the owner opens a
 * new one for what comes next.
 */
export class ShellSession {
  private readonly nonce = randomBytes(8).toString('hex');
  private seq = 0;
  private stdout = '';
  private stderr = '';
  private pending: Pending | undefined;
  private closed = false;
  private readonly outText = new StringDecoder('utf8');
  private readonly errText = new StringDecoder('utf8');

  constructor(private readonly channel: ShellChannel) {
    channel.onStdout((chunk) => {
      this.stdout += this.outText.write(chunk);
      this.settle();
    });
    channel.onStderr((chunk) => {
      this.stderr += this.errText.write(chunk);
      this.settle();
    });
    channel.onClose(() => {
      this.closed = true;
      const p = this.pending;
      if (p !== undefined) {
        this.pending = undefined;
        clearTimeout(p.timer);
        p.resolve({ code: 255, stdout: '', stderr: 'the shell on the host ended' });
      }
    });
  }

  /** Whether a command can be run now: the shell is open and runs none. */
  get idle(): boolean {
    return !this.closed && this.pending === undefined;
  }

  get alive(): boolean {
    return !this.closed;
  }

  /** Runs shell text; only when `idle`. */
  run(command: string, timeoutMs: number): Promise<ExecResult> {
    if (!this.idle) throw new Error('the shell session is busy or closed');
    const seq = ++this.seq;
    const mark = this.marker(seq);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.pending?.seq !== seq) return;
        this.pending = undefined;
        resolve({ code: 124, stdout: '', stderr: `timed out after ${timeoutMs} ms` });
        this.channel.abandon?.();
        this.close();
      }, timeoutMs);
      this.pending = { seq, resolve, timer };
      this.channel.write(
        `(\n${command}\n) </dev/null; printf '\\n%s %d\\n' ${mark} $?; printf '\\n%s\\n' ${mark} >&2\n`,
      );
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.channel.close();
  }

  private marker(seq: number): string {
    return `__mallory_${this.nonce}_${seq}`;
  }

  /** Answers the pending command once both its markers have come. */
  private settle(): void {
    const p = this.pending;
    if (p === undefined) return;
    const mark = this.marker(p.seq);
    const out = new RegExp(`\\n${mark} (\\d+)\\n`).exec(this.stdout);
    const err = this.stderr.indexOf(`\n${mark}\n`);
    if (out === null || err < 0) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    const result = {
      code: Number(out[1]),
      stdout: this.stdout.slice(0, out.index),
      stderr: this.stderr.slice(0, err),
    };
    this.stdout = this.stdout.slice(out.index + out[0].length);
    this.stderr = this.stderr.slice(err + mark.length + 2);
    p.resolve(result);
  }
}

/**
 * Up to `size` kept shells of one host: a command runs on one that runs nothing now (claimed in
 * the same turn it is found idle), else on one opened for it while fewer than `size` are open,
 * else on the first to become idle. `run` answers undefined when no shell can be opened: the
 * caller runs the command its own way.
 */
export class ShellPool {
  private shells: ShellSession[] = [];
  private opening = 0;
  private readonly waiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly size: number,
    /** Opens a shell; `onClosed` is to be called once it is gone. */
    private readonly open: (onClosed: () => void) => Promise<ShellSession>,
  ) {}

  /** Runs `command` — or the text `command()` gives as a shell takes it — on one of the shells. */
  async run(command: string | (() => string), timeoutMs: number): Promise<ExecResult | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      this.shells = this.shells.filter((s) => s.alive);
      const idle = this.shells.find((s) => s.idle);
      if (idle) {
        try {
          return await idle.run(typeof command === 'string' ? command : command(), timeoutMs);
        } finally {
          this.wake();
        }
      }
      if (this.shells.length + this.opening < this.size) {
        this.opening++;
        try {
          // Opened first, then added: `this.shells` may be a new array by then.
          const opened = await this.open(() => {
            this.wake();
          });
          this.shells.push(opened);
        } catch {
          return undefined;
        } finally {
          this.opening--;
        }
        continue;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Closes every shell; commands asked for from now on are answered undefined. */
  close(): void {
    this.closed = true;
    for (const s of this.shells) s.close();
    this.shells = [];
    for (const w of this.waiters.splice(0)) w();
  }

  private wake(): void {
    this.waiters.shift()?.();
  }
}
