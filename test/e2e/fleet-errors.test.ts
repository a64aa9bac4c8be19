import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  type CliResult,
  disposeSandbox,
  isRoot,
  mallory,
  processesMentioning,
  registryFiles,
  type Sandbox,
  sandbox,
  waitFor,
} from './helpers.js';
import { planOf, recordOf } from './fleet-helpers.js';

/** Long enough for a command that is refused up front; a command that spins is killed at it. */
const REFUSAL_TIMEOUT_MS = 30_000;

function expectOneLine(r: CliResult, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).not.toContain('    at ');
  expect(r.stderr).toMatch(pattern);
}

function runDirsIn(store: string): string[] {
  const dir = join(store, 'kvraft');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Edits a plan file in place. */
function editPlan(
  file: string,
  edit: (plan: Record<string, unknown> & { campaigns: { config: Record<string, unknown> }[] }) => void,
): void {
  const plan = JSON.parse(readFileSync(file, 'utf8')) as Parameters<typeof edit>[0];
  edit(plan);
  writeFileSync(file, JSON.stringify(plan));
}

/** A read-only view of `dir` (a read-only bind mount: root writes through file modes). */
function readOnly(dir: string): () => void {
  execFileSync('mount', ['--bind', dir, dir]);
  execFileSync('mount', ['-o', 'remount,bind,ro', dir]);
  return () => execFileSync('umount', [dir]);
}

describe('a fleet, an exchange and a plan given what they cannot use: one line, exit 2, nothing made or lost', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });
  const box = (): Sandbox => {
    const b = sandbox();
    boxes.push(b);
    return b;
  };

  it('refuses a plan whose store is under /proc, an exchange that is a file, under /proc or read-only, and a plan edited out of range', async () => {
    const b = box();
    const plan = planOf(b, 'odd');
    const bad = async (args: readonly string[], pattern: RegExp): Promise<void> => {
      expectOneLine(await mallory(args, b, REFUSAL_TIMEOUT_MS), pattern);
    };
    const proc = join(dirname(plan), 'proc-plan.json');
    writeFileSync(proc, readFileSync(plan, 'utf8').replace(/"store": "[^"]*"/, '"store": "/proc/x"'));
    // It spun at 100% CPU forever before, deaf to SIGTERM.
    await bad(
      ['run', '--plan', proc, '--index', '0'],
      /^mallory: --plan: the plan's records in \/proc\/x\/plans\/odd\/campaigns: cannot create \/proc\/x \(ENOENT\)/,
    );
    await bad(
      ['fleet', 'run', proc],
      /fleet run: the plan's folder \/proc\/x\/plans\/odd: cannot create \/proc\/x \(ENOENT\)/,
    );

    const file = join(b.store, 'a-file');
    writeFileSync(file, '');
    const run = (exchange: string): string[] => [
      'run',
      '--time',
      '5s',
      '--store',
      b.store,
      '--exchange',
      exchange,
    ];
    await bad(run(file), /--exchange .*a-file: .*a-file is not a directory: give a directory/);
    await bad(run('/proc/x'), /--exchange \/proc\/x: cannot create \/proc\/x \(ENOENT\)/);
    if (isRoot) {
      const ro = join(b.store, 'read-only-exchange');
      mkdirSync(ro);
      const release = readOnly(ro);
      try {
        await bad(
          run(ro),
          /--exchange .*read-only-exchange: cannot write there \(EROFS\): give a directory every campaign can write/,
        );
      } finally {
        release();
      }
    }
    // Refused before any run dir was made.
    expect(runDirsIn(b.store)).toEqual([]);

    editPlan(plan, (p) => {
      p.campaigns[1].config.seed = 99;
    });
    await bad(
      ['run', '--plan', plan, '--index', '0'],
      /campaign 1 has seed 3 but config\.seed 99: make them the same/,
    );
    editPlan(plan, (p) => {
      p.campaigns[1].config.seed = 3;
      p.timeMs = 1e300;
      for (const c of p.campaigns) c.config.timeMs = 1e300;
    });
    await bad(['fleet', 'status', plan], /timeMs: must be at most 2147483647 ms/);
    expect(runDirsIn(b.store)).toEqual([]);
    expect(registryFiles(b)).toEqual([]);
  }, 240_000);

  it('refuses `report` on a run.db that is empty or not a database, and `fleet run` / `fleet report` on a read-only store', async () => {
    const b = box();
    const empty = join(b.store, 'kvraft', 'empty');
    const garbage = join(b.store, 'kvraft', 'garbage');
    mkdirSync(empty, { recursive: true });
    mkdirSync(garbage, { recursive: true });
    writeFileSync(join(empty, 'run.db'), '');
    writeFileSync(join(garbage, 'run.db'), 'not a database\n'.repeat(100));
    for (const dir of [empty, garbage]) {
      expectOneLine(
        await mallory(['report', dir], b, REFUSAL_TIMEOUT_MS),
        /report: .*run\.db cannot be read as a run's database \((no such table: run|file is not a database)\): give a run directory/,
      );
    }
    expect(readFileSync(join(garbage, 'run.db'), 'utf8')).toBe('not a database\n'.repeat(100));

    if (!isRoot) return;
    const plan = planOf(b, 'ro');
    const release = readOnly(b.store);
    try {
      expectOneLine(
        await mallory(['fleet', 'run', plan], b, REFUSAL_TIMEOUT_MS),
        /fleet run: the plan's folder .*: cannot write there \(EROFS\): make the store writable/,
      );
      expectOneLine(
        await mallory(['fleet', 'report', plan], b, REFUSAL_TIMEOUT_MS),
        /fleet report: the report in .*: cannot (write there|create .*) \(EROFS\)/,
      );
      expectOneLine(
        await mallory(['run', '--plan', plan, '--index', '0'], b, REFUSAL_TIMEOUT_MS),
        /--plan: the plan's records in .*: cannot create .* \(EROFS\)/,
      );
    } finally {
      release();
    }
  }, 240_000);

  it('a worker whose run dir is removed under it says so in one line and keeps no result from it', async () => {
    const b = box();
    const plan = planOf(b, 'removed');
    const worker = mallory(['run', '--plan', plan, '--index', '0'], b);
    await waitFor(() => recordOf(plan, 0)?.runDir !== undefined, 60_000);
    const runDir = recordOf(plan, 0)!.runDir!;
    rmSync(runDir, { recursive: true, force: true });
    const r = await worker;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).not.toContain('    at ');
    expect(r.stderr).not.toContain('internal error');
    expect(r.stderr).toContain(
      `campaign 0: its run dir ${runDir} was removed while it ran (something removed it): nothing of this attempt is kept; run the index again`,
    );
    expect(recordOf(plan, 0)).toMatchObject({ status: 'failed', attempt: 1 });

    // The plan's whole store removed: the plan's folder not made again, nothing recorded, one line.
    const again = mallory(['run', '--plan', plan, '--index', '1'], b);
    await waitFor(() => recordOf(plan, 1)?.runDir !== undefined, 60_000);
    rmSync(b.store, { recursive: true, force: true });
    const gone = await again;
    expect(gone.code, gone.stderr).toBe(3);
    expect(gone.stderr).not.toContain('    at ');
    expect(gone.stderr).toMatch(
      /campaign 1: its run dir .* was removed while it ran \(the plan's store was removed\)/,
    );
    expect(existsSync(dirname(plan))).toBe(false);
    expect(registryFiles(b)).toEqual([]);
    expect(processesMentioning(plan)).toEqual([]);
  }, 240_000);
});
