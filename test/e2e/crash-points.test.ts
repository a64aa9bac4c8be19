import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { BIN, mallory, REPO, registryFiles, sandbox, type Sandbox } from './helpers.js';

/**
 * Kills the fuzzer right after its k-th external command or resource record (the
 * `MALLORY_CRASH_AFTER` test mode), for every k of a short campaign, and checks that `mallory
 * cleanup` then leaves the host exactly as it was, and run.db intact and marked incomplete.
 */

const isRoot = process.getuid?.() === 0;
const has = (bin: string): boolean => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

function lines(argv: readonly string[]): string[] {
  try {
    return execFileSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .split('\n')
      .filter((l) => l.trim() !== '');
  } catch {
    return [];
  }
}

function parentOf(pid: string): { ppid: string; zombie: boolean } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: fields[1], zombie: fields[0] === 'Z' };
  } catch {
    return undefined;
  }
}

/** Live processes that are not this test's own descendants. */
function foreignProcesses(): Map<string, string> {
  const mine = String(process.pid);
  const result = new Map<string, string>();
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    let p = pid;
    let ours = false;
    for (let depth = 0; depth < 64 && p !== '0' && p !== '1'; depth++) {
      if (p === mine) {
        ours = true;
        break;
      }
      const parent = parentOf(p);
      if (parent === undefined) break;
      p = parent.ppid;
    }
    const info = parentOf(pid);
    // Kernel threads (children of kthreadd, PID 2) come and go on their own.
    if (ours || info === undefined || info.zombie || info.ppid === '2' || pid === '2') continue;
    try {
      result.set(pid, readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim());
    } catch {
      // exited meanwhile
    }
  }
  return result;
}

interface HostSnapshot {
  readonly pids: ReadonlySet<string>;
  readonly state: Record<string, readonly string[]>;
}

function snapshot(): HostSnapshot {
  return {
    pids: new Set(foreignProcesses().keys()),
    state: {
      namespaces: lines(['ip', 'netns', 'list']).map((l) => l.split(' ')[0]),
      links: lines(['ip', '-o', 'link', 'show']).map((l) => l.split(':')[1].trim().split('@')[0]),
      routes: lines(['ip', '-4', 'route', 'show', 'table', 'all']),
      iptables: lines(['iptables-save'])
        .filter((l) => !l.startsWith('#'))
        .map((l) => l.replace(/\[\d+:\d+\]/, '')),
      shm: readdirSync('/dev/shm'),
      tmp: readdirSync(tmpdir()),
    },
  };
}

/** What is on the host now and was not before (processes: new ones that are not ours). */
function leftovers(before: HostSnapshot): string[] {
  const now = snapshot();
  const left: string[] = [];
  for (const [kind, items] of Object.entries(now.state)) {
    const had = new Set(before.state[kind]);
    for (const item of items) if (!had.has(item)) left.push(`${kind}: ${item}`);
    const has = new Set(items);
    for (const item of before.state[kind]) if (!has.has(item)) left.push(`${kind} gone: ${item}`);
  }
  for (const [pid, cmd] of foreignProcesses()) if (!before.pids.has(pid)) left.push(`process ${pid}: ${cmd}`);
  return left;
}

const SETTLE_MS = 3000;

/** Leftovers, asked again for a moment: a process being reaped may still show for a few ms. */
async function settledLeftovers(before: HostSnapshot): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const left = leftovers(before);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function runDirs(store: string): string[] {
  if (!existsSync(store)) return [];
  return readdirSync(store)
    .filter((s) => s !== 'latest' && !s.startsWith('latest.'))
    .flatMap((system) => readdirSync(join(store, system)).map((d) => join(store, system, d)));
}

interface Outcome {
  readonly killed: boolean;
  readonly stderr: string;
}

function runUntilCrash(args: readonly string[], box: Sandbox, k: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...box.env, MALLORY_CRASH_AFTER: String(k) },
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (_code, signal) => {
      resolve({ killed: signal === 'SIGKILL', stderr });
    });
  });
}

const SCHEDULE = [
  '{"atMs": 300, "f": "kill", "value": "one"}',
  '{"atMs": 600, "f": "start-partition", "value": "halves"}',
].join('\n');
/** No system should take more points than this; a loop that never ends is a failure too. */
const MAX_POINTS = 200;

describe('a fuzzer killed at every point leaves nothing after cleanup', () => {
  const boxes: Sandbox[] = [];
  afterAll(() => {
    for (const b of boxes) rmSync(join(b.store, '..'), { recursive: true, force: true });
  });

  const cases = [
    { system: 'kvraft', skip: undefined },
    {
      system: 'etcd',
      skip: !isRoot ? 'not root' : !has('etcd') ? 'etcd not installed' : undefined,
    },
  ];
  for (const { system, skip } of cases) {
    it.skipIf(skip !== undefined)(
      `${system}: every crash point${skip ? ` (skipped: ${skip})` : ''}`,
      async () => {
        const box = sandbox();
        boxes.push(box);
        const schedule = join(box.store, '..', 'schedule.jsonl');
        writeFileSync(schedule, SCHEDULE + '\n');
        const args = [
          'run',
          '--system',
          system,
          '--schedule',
          schedule,
          '--steps',
          '1',
          '--step',
          '1s',
          '--time',
          '30s',
          '--seed',
          '1',
          '--store',
          box.store,
        ];
        const before = snapshot();
        const started = Date.now();
        let k = 1;
        for (; k <= MAX_POINTS; k++) {
          const known = new Set(runDirs(box.store));
          const outcome = await runUntilCrash(args, box, k);
          const cleanup = await mallory(['cleanup'], box);
          expect(cleanup.code, cleanup.stderr).toBe(0);
          expect({ k, left: await settledLeftovers(before) }).toEqual({ k, left: [] });
          expect(registryFiles(box)).toEqual([]);
          for (const dir of runDirs(box.store).filter((d) => !known.has(d))) {
            if (!existsSync(join(dir, 'run.db'))) continue;
            const db = new Database(join(dir, 'run.db'), { readonly: true });
            try {
              expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
              const status = (db.prepare('SELECT status FROM run').get() as { status: string }).status;
              expect({ k, status }).toEqual({ k, status: outcome.killed ? 'incomplete' : 'complete' });
            } finally {
              db.close();
            }
          }
          if (!outcome.killed) break;
        }
        expect(k).toBeLessThanOrEqual(MAX_POINTS);
        expect(k).toBeGreaterThan(3);
        process.stdout.write(
          `crash points (${system}): ${k - 1} points, each killed and cleaned, in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
        );
      },
      1_800_000,
    );
  }
});
