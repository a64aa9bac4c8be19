import { execFile } from 'node:child_process';

import type { Address } from '../../cluster/net/backend.js';

export const DATABASE = 'demo';
const SHELL_TIMEOUT_MS = 5_000;

export interface ShellResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one `dqlite -s SERVERS demo COMMAND` shell command (the Debian go-dqlite shell). */
export function dqliteShell(
  servers: readonly Address[],
  command: readonly string[],
  timeoutMs = SHELL_TIMEOUT_MS,
  /** Ends the shell (by its PID, as its timeout does) when it fires: the run's budget or its stop. */
  signal?: AbortSignal,
): Promise<ShellResult> {
  const list = servers.map((a) => `${a.host}:${a.port}`).join(',');
  return new Promise((resolve) => {
    execFile(
      'dqlite',
      ['-s', list, DATABASE, ...command],
      { timeout: timeoutMs, ...(signal !== undefined ? { signal } : {}) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr: stderr || (error?.message ?? '') });
      },
    );
  });
}

export interface ClusterMember {
  readonly address: string;
  /** 0 voter, 1 stand-by, 2 spare. */
  readonly role: number;
  /** The raft server id (a process that joined afresh has a new one). */
  readonly id?: string;
}

export function parseClusterJson(stdout: string): ClusterMember[] | undefined {
  try {
    // Raft ids are 64-bit: read as text, not as numbers that would lose their last digits.
    const text = stdout.replace(/"ID"\s*:\s*(\d+)/g, '"ID":"$1"');
    const parsed = JSON.parse(text) as { Address?: string; Role?: number; ID?: string }[];
    return parsed.map((m) => ({
      address: m.Address ?? '',
      role: m.Role ?? -1,
      ...(m.ID !== undefined ? { id: m.ID } : {}),
    }));
  } catch {
    return undefined;
  }
}
