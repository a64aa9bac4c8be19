import { execFile } from 'node:child_process';

import { crashPoint } from './crash-point.js';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Runs a command to completion (never through a shell); never rejects for a non-zero exit. */
export function run(
  argv: readonly string[],
  options: {
    readonly input?: string | Buffer;
    readonly timeoutMs?: number | undefined;
    /** It ends what the run started on its way out: a crash point that never throws (`crashPoint`). */
    readonly cleanup?: boolean | undefined;
  } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      argv[0],
      argv.slice(1),
      { timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        try {
          // A cleanup is a removal of what the run started (its trace line says so), and never throws.
          if (options.cleanup === true) crashPoint(`remove by ${argv.join(' ')}`, false);
          else crashPoint(`ran ${argv.join(' ')}`);
        } catch (crash) {
          reject(crash instanceof Error ? crash : new Error(String(crash)));
          return;
        }
        resolve({ code, stdout, stderr: stderr || (error && code !== 0 ? error.message : '') });
      },
    );
    if (options.input !== undefined) {
      child.stdin?.on('error', () => {
        // the command ended without reading all its input: its exit says why
      });
      child.stdin?.end(options.input);
    }
  });
}

/** Runs a command and throws, naming the command and its stderr, when it fails. */
export async function mustRun(
  argv: readonly string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const result = await run(argv, options);
  if (result.code !== 0) {
    throw new Error(`\`${argv.join(' ')}\` failed (exit ${result.code}): ${result.stderr.trim()}`);
  }
  return result.stdout;
}
