import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { readHistory } from '../../src/store/run-reader.js';
import { disposeSandbox, mallory, REPO, registryFiles, type Sandbox, sandbox, jsonOf } from './helpers.js';

/** The example workload: counters only go up, and its own checker says reads must not go down. */
const WORKLOAD = 'examples/workloads/monotonic-counter.ts';
const WORKLOAD_FILE = join(REPO, WORKLOAD);
/** Isolates the leader 2.5–17.5 s: with `--bug stale-read` it keeps answering reads from its old state. */
const STALE_READ = join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'stale-read.jsonl');

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly schedules: number;
  readonly bugs: readonly {
    readonly dir: string;
    readonly kind: string;
    readonly name: string;
    readonly message: string;
  }[];
}

describe('mallory run --workload PATH (a workload defined outside the repo, on real kvraft)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it("runs the workload's ops against the system and its own checker on each schedule", async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      ['run', '--system', 'kvraft', '--workload', WORKLOAD, '--time', '20s', '--seed', '3'].concat([
        '--policy',
        'random',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect(r.stderr).toContain('run dir');
    const summary = jsonOf(r) as Summary;
    expect(summary.status).toBe('complete');
    // kvraft without a bug switch is correct: the user's checker reports nothing.
    expect(summary.bugs.filter((b) => b.kind === 'workload')).toEqual([]);
    const ops = (await readHistory(summary.runDir)).filter((op) => op.process !== 'nemesis');
    const acknowledged = ops.filter((op) => op.type === 'ok');
    expect(new Set(acknowledged.map((op) => op.f))).toEqual(new Set(['add', 'read']));
    expect(acknowledged.every((op) => /^s0-m\d$/.test((op.value as [string, number])[0]))).toBe(true);
    expect(acknowledged.filter((op) => op.f === 'read').length).toBeGreaterThan(10);
    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const run = db.prepare('SELECT config FROM run').get() as { config: string };
    const schedules = db.prepare('SELECT check_result FROM schedules ORDER BY idx').all() as {
      check_result: string | null;
    }[];
    db.close();
    expect((JSON.parse(run.config) as { workload: string }).workload).toBe(WORKLOAD_FILE);
    expect(schedules.length).toBeGreaterThan(0);
    // Each checked schedule says what each checker found: the workload's own, in place of a built-in's.
    const checks = schedules.map(
      (s) => (JSON.parse(s.check_result ?? '{}') as { checks?: Record<string, string[]> }).checks,
    );
    expect(checks[0]).toEqual({ 'monotonic-counter': [], invariants: [] });
    expect(registryFiles(box)).toEqual([]);
  });

  it("records the workload's own verdict on a real bug as a bug, with its path for replay", async () => {
    const box = sandbox();
    boxes.push(box);
    const found = await mallory(
      ['run', '--system', 'kvraft', '--workload', WORKLOAD, '--bug', 'stale-read']
        .concat(['--schedule', STALE_READ, '--steps', '8', '--time', '5m', '--seed', '7'])
        .concat(['--store', box.store, '--json']),
      box,
    );
    expect(found.code, found.stderr).toBe(1);
    const summary = jsonOf(found) as Summary;
    const bug = summary.bugs.find((b) => b.kind === 'workload');
    expect(bug?.name).toBe('read-went-down');
    expect(bug?.message).toMatch(
      /^\d+ of \d+ counter reads went down: counter "s0-m\d": process \d+'s read \(op \d+, ok at op \d+ on n\d\) saw \d+, but process \d+'s read \(op \d+, ok at op \d+ on n\d\), which ended before it began, had seen \d+/,
    );
    const evidence = JSON.parse(readFileSync(join(bug!.dir, 'evidence.json'), 'utf8')) as {
      violations: unknown[];
    };
    expect(evidence.violations.length).toBeGreaterThan(0);
    const header = (
      JSON.parse(readFileSync(join(bug!.dir, 'schedule.jsonl'), 'utf8').split('\n')[0]) as {
        mallory: { workload: string; finding: { kind: string; name: string } };
      }
    ).mallory;
    expect(header.workload).toBe(WORKLOAD_FILE);
    expect(header.finding).toEqual({ kind: 'workload', name: 'read-went-down' });
    const replay = await mallory(['replay', bug!.dir, '--store', box.store], box);
    expect(replay.stdout).toMatch(/^reproduced [01]\/1 \(workload\/read-went-down\)$/m);
    expect([0, 1]).toContain(replay.code);
    expect(registryFiles(box)).toEqual([]);
  });

  it('refuses in one line (exit 2) a workload file that is missing, or one the system cannot run', async () => {
    const box = sandbox();
    boxes.push(box);
    const missing = await mallory(
      ['run', '--workload', 'examples/workloads/nope.ts', '--store', box.store],
      box,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      'mallory: --workload examples/workloads/nope.ts: no such file or directory\n',
    );
    const refused = await mallory(
      ['run', '--system', 'examples/tiny-kv/system.ts', '--workload', WORKLOAD, '--store', box.store],
      box,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `mallory: --workload ${WORKLOAD}: workload monotonic-counter cannot run on system tiny-kv, which keeps no counters (a counter client with an atomic add)\n`,
    );
  });
});
