import { execFile } from 'node:child_process';

import type { DoctorFinding } from './system.js';

const VERSION_TIMEOUT_MS = 5_000;

/**
 * For `SystemAdapter.doctor`: runs `command args` (a version flag, say) and reports the binary as
 * present, with the first line it prints, or as missing with `apt-get install -y debianPackage`.
 */
export function checkBinary(
  command: string,
  args: readonly string[],
  debianPackage: string,
  what: string,
): Promise<DoctorFinding> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: VERSION_TIMEOUT_MS }, (error, stdout, stderr) => {
      const missing = error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT';
      if (missing || (error !== null && stdout === '' && stderr === '')) {
        resolve({
          ok: false,
          what: `${what}: \`${command}\` not found`,
          fix: `apt-get install -y ${debianPackage}`,
        });
        return;
      }
      const first = (stdout || stderr).split('\n').find((l) => l.trim() !== '') ?? '';
      resolve({ ok: true, what: `${what}: ${first.trim()}` });
    });
  });
}
