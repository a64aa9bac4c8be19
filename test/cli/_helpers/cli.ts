import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import { REPO_ROOT } from '../../check/data-dir.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
const run = promisify(execFile);

export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI (`npm test` builds first). */
export async function mallory(...args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MALLORY, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
