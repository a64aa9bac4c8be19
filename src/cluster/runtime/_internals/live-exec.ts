import { type ChildProcess, spawn } from 'node:child_process';

import type { ExecOptions, ExecResult } from '../runtime.js';

/** Whether `exec` was asked for a live command (output as it comes, stdin written as it goes, abortable). */
export function isLive(options: ExecOptions): boolean {
  const { input } = options;
  return (
    options.onStdout !== undefined ||
    options.onStderr !== undefined ||
    options.signal !== undefined ||
    (input !== undefined && typeof input !== 'string' && !Buffer.isBuffer(input))
  );
}

/**
 * Writes `input` to a command's stdin (`write`/`end` of a pipe or a channel): bytes at once, a
 * stream as it comes, EOF after either.
 */
export function feedInput(
  input: ExecOptions['input'],
  stdin: NodeJS.WritableStream | null | undefined,
  ended: Promise<unknown>,
): void {
  if (input === undefined || !stdin) return;
  if (typeof input === 'string' || Buffer.isBuffer(input)) {
    stdin.end(input);
    return;
  }
  input.pipe(stdin);
  // The command gone first: the caller's stream must not write to it any more.
  void ended.then(() => input.unpipe(stdin));
}

/**
 * Runs `argv` on this machine as a live command (its own process group, so a Ctrl-C at the
 * terminal reaches the fuzzer only): stdout and stderr handed over as they come, or kept for the
 * result; aborting `signal` or passing `timeoutMs` kills it. Never rejects.
 */
export function spawnLive(
  argv: readonly string[],
  options: ExecOptions,
  defaultTimeoutMs?: number,
): Promise<ExecResult> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(argv[0], argv.slice(1), {
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (error) {
      resolve({ code: 127, stdout: '', stderr: (error as Error).message });
      return;
    }
    let stdout = '';
    let stderr = '';
    const timeoutMs = options.timeoutMs ?? (options.signal ? undefined : defaultTimeoutMs);
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            stderr += `timed out after ${timeoutMs} ms`;
            child.kill('SIGKILL');
          }, timeoutMs);
    const abort = (): void => {
      child.kill('SIGKILL');
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    const { onStdout, onStderr } = options;
    child.stdout?.on('data', (d: Buffer) => {
      if (onStdout) onStdout(d);
      else stdout += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      if (onStderr) onStderr(d);
      else stderr += d.toString();
    });
    child.stdin?.on('error', () => {
      // the command ended without reading all its input: its exit says why
    });
    child.once('error', (error) => {
      stderr += error.message;
    });
    const closed = new Promise<void>((done) => {
      child.once('close', (code) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', abort);
        resolve({ code: code ?? 1, stdout, stderr });
        done();
      });
    });
    feedInput(options.input, child.stdin, closed);
  });
}
