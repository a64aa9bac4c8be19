import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { readHistory } from '../../src/store/run-reader.js';
import { disposeSandbox, mallory, REPO, type Sandbox, sandbox, jsonOf } from './helpers.js';

/** Flags every schedule the nemesis acted in: a bug record from each, whatever kvraft does. */
const FLAG_FAULTED = join(REPO, 'test', 'fixtures', 'workloads', 'faulted-schedules.ts');

describe('pacing: a warm-up before the first fault, and quiet periods (kvraft, real processes)', () => {
  const box: Sandbox = sandbox();
  afterAll(() => {
    disposeSandbox(box);
  });

  it('--warmup 3s --pace 2:1: no fault for 3 s, then two steps of faults and one quiet step, in turn', async () => {
    const r = await mallory(
      ['run', '--policy', 'random', '--time', '25s', '--steps', '6', '--step', '2s', '--seed', '4'].concat([
        '--warmup',
        '3s',
        '--pace',
        '2:1',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warm-up: \d+ ok ops in 3\.0 s before the first fault/);
    const summary = jsonOf(r) as { runDir: string; status: string };
    expect(summary.status).toBe('complete');

    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const steps = db.prepare('SELECT schedule, step, fault FROM steps ORDER BY schedule, step').all() as {
      schedule: number;
      step: number;
      fault: string | null;
    }[];
    const faultRows = db.prepare('SELECT step, f FROM faults WHERE step IS NOT NULL').all() as {
      step: number;
      f: string;
    }[];
    db.close();
    expect(steps.length).toBeGreaterThanOrEqual(6);
    // Steps 2 and 5 of each schedule are quiet: recorded so, and the one fault line in them is the
    // heal-all that begins them. (run.db keeps each step's fault as JSON.)
    for (const s of steps) {
      expect(JSON.parse(s.fault ?? 'null') === 'quiet', `step ${s.step}`).toBe(s.step % 3 === 2);
    }
    const inQuiet = faultRows.filter((row) => row.step % 3 === 2);
    expect(inQuiet.map((row) => row.f)).toEqual(inQuiet.map(() => 'heal-all'));
    expect(new Set(inQuiet.map((row) => row.step))).toEqual(
      new Set(steps.filter((s) => s.step % 3 === 2).map((s) => s.step)),
    );

    const history = await readHistory(summary.runDir);
    const nemesis = history.filter((op) => op.process === 'nemesis');
    // A heal-all is an invocation and its completion, as any fault.
    expect(nemesis.filter((op) => op.f === 'heal-all').length).toBeGreaterThanOrEqual(4);
    expect(nemesis.filter((op) => op.f === 'quiet')).toEqual([]);
    // The warm-up: clients were served for about 3 s before the nemesis did anything.
    const firstClient = history.find((op) => op.process !== 'nemesis' && op.type === 'ok');
    const firstNemesis = nemesis[0];
    expect(firstClient).toBeDefined();
    expect((firstNemesis.time - firstClient!.time) / 1e9).toBeGreaterThan(2.5);
  });

  it('a bug of a paced run keeps its warm-up and quiet periods, and its replay runs both', async () => {
    const r = await mallory(
      ['run', '--policy', 'random', '--time', '20s', '--steps', '4', '--step', '2s', '--seed', '5'].concat([
        '--warmup',
        '2s',
        '--pace',
        '1:1',
        '--workload',
        FLAG_FAULTED,
        '--stop-on-bug',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect(r.code, r.stderr).toBe(1);
    const summary = jsonOf(r) as { bugs: { dir: string; kind: string; name: string }[] };
    const bug = summary.bugs[0];
    expect(`${bug.kind}/${bug.name}`).toBe('workload/had-faults');
    const lines = readFileSync(join(bug.dir, 'schedule.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { mallory?: { warmupMs?: number }; f?: string; atMs?: number });
    expect(lines[0].mallory?.warmupMs).toBe(2000);
    // Steps 1 and 3 are quiet: each begins with a heal of everything, at the step's start.
    const heals = lines.filter((l) => l.f === 'heal-all');
    expect(heals.map((l) => Math.round((l.atMs ?? 0) / 2000))).toEqual([1, 3]);

    // --verbose: the try's whole campaign output, its warm-up line among it.
    const replay = await mallory(
      ['replay', bug.dir, '--repeat', '1', '--store', box.store, '--json', '--verbose'],
      box,
    );
    expect(replay.code, replay.stderr).toBe(1);
    expect(replay.stderr).toMatch(/warm-up: \d+ ok ops in 2\.0 s before the first fault/);
    const result = jsonOf(replay) as { reproduced: number; tries: { runDir: string }[] };
    expect(result.reproduced).toBe(1);
    const replayed = await readHistory(result.tries[0].runDir);
    const healed = replayed.filter((op) => op.process === 'nemesis' && op.f === 'heal-all');
    // Each heal-all line is an invocation and its completion.
    expect(healed.length).toBe(4);
  });

  it('a malformed --pace is one line and exit 2', async () => {
    const r = await mallory(['run', '--pace', '3', '--store', box.store], box);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mallory: --pace: "3" is not FAULT_STEPS:QUIET_STEPS with both at least 1, e.g. --pace 4:2',
    );
  });
});
