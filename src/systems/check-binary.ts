import { AsyncLocalStorage } from 'node:async_hooks';
import { execFile } from 'node:child_process';

import type { DoctorFinding } from './system.js';

const VERSION_TIMEOUT_MS = 5_000;
/** A shell's exit status for a command it cannot find (127) or cannot run (126). */
const NOT_FOUND_CODES = [126, 127];

/** Runs a command where the binaries are checked: another host's (`mallory doctor --hosts`). */
export type BinaryRunner = (
  argv: readonly string[],
  timeoutMs: number,
) => Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>;

const where = new AsyncLocalStorage<BinaryRunner>();

/**
 * Runs `check` (an adapter's `doctor()`) with every `checkBinary` in it run by `runner`, on the
 * host it reaches, so a system's own checks say what that host has.
 */
export function checkingBinariesWith<T>(runner: BinaryRunner, check: () => Promise<T>): Promise<T> {
  return where.run(runner, check);
}

/** How to get a binary: its Debian package when the adapter names one. */
function fixFor(command: string, debianPackage: string | undefined): string {
  return debianPackage !== undefined && debianPackage !== ''
    ? `apt-get install -y ${debianPackage}`
    : `install \`${command}\` or put it on PATH`;
}

/**
 * For `SystemAdapter.doctor`: runs `command args` (a version flag, say) and reports the binary as
 * present, with `what` (default: the command) and the first line it prints, or as missing with
 * `apt-get install -y debianPackage` (without a package: install it or put it on PATH). A plain
 * JavaScript adapter may leave out the last two.
 */
export function checkBinary(
  command: string,
  args: readonly string[],
  debianPackage?: string,
  what: string = command,
): Promise<DoctorFinding> {
  const runner = where.getStore();
  if (runner !== undefined) return checkWith(runner, command, args, debianPackage, what);
  return new Promise((resolve) => {
    execFile(command, args, { timeout: VERSION_TIMEOUT_MS }, (error, stdout, stderr) => {
      const missing = error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT';
      if (missing || (error !== null && stdout === '' && stderr === '')) {
        resolve({
          ok: false,
          what: `${what}: \`${command}\` not found`,
          fix: fixFor(command, debianPackage),
        });
        return;
      }
      const first = (stdout || stderr).split('\n').find((l) => l.trim() !== '') ?? '';
      resolve({ ok: true, what: `${what}: ${first.trim()}` });
    });
  });
}

async function checkWith(
  runner: BinaryRunner,
  command: string,
  args: readonly string[],
  debianPackage: string | undefined,
  what: string,
): Promise<DoctorFinding> {
  const result = await runner([command, ...args], VERSION_TIMEOUT_MS);
  if (NOT_FOUND_CODES.includes(result.code)) {
    return {
      ok: false,
      what: `${what}: \`${command}\` not found`,
      fix: fixFor(command, debianPackage),
    };
  }
  const first = (result.stdout || result.stderr).split('\n').find((l) => l.trim() !== '') ?? '';
  return { ok: true, what: `${what}: ${first.trim()}` };
}
