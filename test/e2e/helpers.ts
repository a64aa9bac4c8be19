import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const BIN = join(REPO, 'bin', 'mallory.js');

export interface Sandbox {
  readonly store: string;
  readonly state: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A private store and registry dir, so tests never see each other's runs. */
export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'mallory-e2e-'));
  const state = join(root, 'state');
  return { store: join(root, 'store'), state, env: { ...process.env, MALLORY_STATE_DIR: state } };
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function mallory(args: readonly string[], box: Sandbox, timeoutMs = 300_000): Promise<CliResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: box.env, cwd: REPO });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

export function malloryJson(args: readonly string[], box: Sandbox): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: box.env, cwd: REPO, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** PIDs of processes whose command line mentions `needle` (to prove nothing of a run is left). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(needle) && Number(entry) !== process.pid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

export function registryFiles(box: Sandbox): string[] {
  return existsSync(box.state) ? readdirSync(box.state).filter((f) => f.endsWith('.jsonl')) : [];
}
