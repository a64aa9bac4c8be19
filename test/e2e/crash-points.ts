import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import {
  BIN,
  mallory,
  REPO,
  registryFiles,
  sandbox,
  type Sandbox,
  disposeSandbox,
  skipReason,
} from './helpers.js';
import { settledLeftovers, snapshot } from './host.js';

export { skipReason };

/**
 * Kills the fuzzer right after its k-th external command or resource record (the
 * `MALLORY_CRASH_AFTER` test mode), for every k of a short campaign, and checks that `mallory
 * cleanup` then leaves the host exactly as it was, and run.db intact and marked incomplete. Then
 * the same with an internal error thrown at each point (`MALLORY_CRASH_WITH=error`): the run must
 * remove everything itself and record the status `error`. One file per case
 * (crash-points*.test.ts), so the suite runs them side by side.
 */

function runDirs(store: string): string[] {
  if (!existsSync(store)) return [];
  // store/<system>/<run>; `latest` is a link and index.html a file.
  return readdirSync(store, { withFileTypes: true })
    .filter((s) => s.isDirectory())
    .flatMap((system) => readdirSync(join(store, system.name)).map((d) => join(store, system.name, d)));
}

export type Mode = 'kill' | 'error';

interface Outcome {
  /** Whether the k-th point was reached (else the run ended first). */
  readonly reached: boolean;
  readonly code: number | null;
  readonly stderr: string;
  /** The points the run passed, in order (`k<TAB>label`). */
  readonly trace: readonly string[];
}

/**
 * The runs' own temp dir (`TMPDIR`): whatever a run makes there must be gone after it ends or
 * after `mallory cleanup`, so a temp dir made without a record is seen (other files' runs use
 * the host's /tmp beside it). Helpers built on first use stay in the shared cache.
 */
function runTmp(box: Sandbox): string {
  return join(box.store, '..', 'tmp');
}

function runUntilCrash(args: readonly string[], box: Sandbox, k: number, mode: Mode): Promise<Outcome> {
  const traceFile = join(box.store, '..', 'crash-trace');
  rmSync(traceFile, { force: true });
  mkdirSync(runTmp(box), { recursive: true });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: {
        ...box.env,
        TMPDIR: runTmp(box),
        MALLORY_CACHE_DIR: box.env.MALLORY_CACHE_DIR ?? join(tmpdir(), 'mallory-cache'),
        MALLORY_CRASH_TRACE: traceFile,
        MALLORY_CRASH_AFTER: String(k),
        ...(mode === 'error' ? { MALLORY_CRASH_WITH: 'error' } : {}),
      },
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code, signal) => {
      const reached = mode === 'kill' ? signal === 'SIGKILL' : /crash point \d+:/.test(stderr);
      const trace = existsSync(traceFile) ? readFileSync(traceFile, 'utf8').split('\n').filter(Boolean) : [];
      resolve({ reached, code, stderr, trace });
    });
  });
}

export const SCHEDULE = [
  '{"atMs": 300, "f": "kill", "value": "one"}',
  '{"atMs": 600, "f": "start-partition", "value": "halves"}',
].join('\n');
/** With disk faults: every node's data dir is a FUSE mount, and its layer a process. */
export const DISK_SCHEDULE = [
  '{"atMs": 300, "f": "lose-unfsynced", "value": "one"}',
  '{"atMs": 600, "f": "heal-disk", "value": "all"}',
].join('\n');
/** No system should take more points than this; a loop that never ends is a failure too. */
const MAX_POINTS = 200;

export interface CrashPointCase {
  readonly system: string;
  readonly name: string;
  readonly schedule: string;
  /** Why it cannot run here, or undefined. */
  readonly skip: string | undefined;
  /** The modes to run (default both). */
  readonly modes?: readonly Mode[];
  /** Flags added to the run (e.g. its hosts), asked for when the test starts. */
  readonly args?: () => readonly string[];
  /** Every `stride`-th point only (default 1: every point). */
  readonly stride?: number;
  /** What the run left elsewhere than this machine's own state (e.g. on its hosts). */
  readonly leftovers?: () => Promise<readonly string[]>;
}

/** Both modes (SIGKILL then cleanup; an internal error) at every point of one short campaign. */
export function describeCrashPoints(c: CrashPointCase): void {
  describe('a fuzzer killed at every point leaves nothing after cleanup', () => {
    const boxes: Sandbox[] = [];
    afterAll(() => {
      for (const b of boxes) disposeSandbox(b);
    });

    const { system, name, schedule: scheduleText, skip } = c;
    const stride = c.stride ?? 1;
    const every = stride === 1 ? 'every point' : `one point in ${stride}`;
    const modes: readonly { mode: Mode; what: string }[] = [
      { mode: 'kill' as const, what: `SIGKILL at ${every}, then cleanup` },
      {
        mode: 'error' as const,
        what: `an internal error at ${every} (no cleanup: the run cleans up itself)`,
      },
    ].filter((m) => (c.modes ?? ['kill', 'error']).includes(m.mode));
    for (const { mode, what } of modes) {
      it.skipIf(skip !== undefined)(
        `${name}: ${what}${skip ? ` (skipped: ${skip})` : ''}`,
        async () => {
          const box = sandbox();
          boxes.push(box);
          const schedule = join(box.store, '..', 'schedule.jsonl');
          writeFileSync(schedule, scheduleText + '\n');
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
            ...(c.args?.() ?? []),
          ];
          const before = snapshot();
          const started = Date.now();
          let k = 1;
          for (; k <= MAX_POINTS; k += stride) {
            const known = new Set(runDirs(box.store));
            const outcome = await runUntilCrash(args, box, k, mode);
            if (mode === 'kill') {
              const cleanup = await mallory(['cleanup'], box);
              expect(cleanup.code, cleanup.stderr).toBe(0);
            } else if (outcome.reached) {
              expect({ k, code: outcome.code }).toEqual({ k, code: 2 });
              expect(outcome.stderr).toMatch(/internal error|error/);
            } else {
              // Not reached must mean the run ended before a point that may throw, never that
              // something swallowed the error and went on (removals are the points that may not).
              const passed = outcome.trace.slice(k - 1).filter((line) => !/\tremove /.test(line));
              expect({ k, swallowed: passed }).toEqual({ k, swallowed: [] });
            }
            expect({ k, left: await settledLeftovers(before, box) }).toEqual({ k, left: [] });
            if (c.leftovers) expect({ k, elsewhere: await c.leftovers() }).toEqual({ k, elsewhere: [] });
            expect(registryFiles(box)).toEqual([]);
            expect({ k, tmp: readdirSync(runTmp(box)) }).toEqual({ k, tmp: [] });
            for (const dir of runDirs(box.store).filter((d) => !known.has(d))) {
              if (!existsSync(join(dir, 'run.db'))) continue;
              const db = new Database(join(dir, 'run.db'), { readonly: true });
              try {
                expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
                const row = db.prepare('SELECT status, summary FROM run').get() as {
                  status: string;
                  summary: string | null;
                };
                const status = row.status;
                const expected = !outcome.reached ? 'complete' : mode === 'kill' ? 'incomplete' : 'error';
                // A status other than expected says why: the run's recorded summary (its error) and stderr.
                expect(
                  { k, status },
                  `summary ${row.summary?.slice(0, 2000)}\nstderr ${outcome.stderr.slice(-3000)}`,
                ).toEqual({ k, status: expected });
              } finally {
                db.close();
              }
            }
            if (!outcome.reached) break;
          }
          expect(k).toBeLessThanOrEqual(MAX_POINTS);
          expect(k).toBeGreaterThan(3);
          process.stdout.write(
            `crash points (${name}, ${mode}): up to point ${k - 1}${stride > 1 ? ` (one in ${stride})` : ''}, in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
          );
        },
        1_800_000,
      );
    }
  });
}
