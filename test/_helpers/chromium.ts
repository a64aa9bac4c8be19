import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Debian's chromium. */
export const CHROMIUM = '/usr/bin/chromium';
/** How long one chromium command may take. */
export const CHROMIUM_TIMEOUT_MS = 90_000;
const execFileAsync = promisify(execFile);

/**
 * Runs Debian's chromium headless with a fresh profile (removed after) and `args` (e.g.
 * `--dump-dom URL`, `--screenshot=PNG URL`); returns what it printed. The flags keep it off the
 * network, which this machine's closed network would refuse many times over.
 */
export async function chromium(args: readonly string[]): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), 'mallory-chromium-'));
  try {
    const { stdout } = await execFileAsync(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--user-data-dir=${profile}`,
        ...args,
      ],
      { timeout: CHROMIUM_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
    );
    return stdout;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
