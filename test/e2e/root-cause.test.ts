import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { findingSignature } from '../../src/campaign/finding-groups.js';
import type { CrashEvidence } from '../../src/campaign/root-cause.js';
import { disposeSandbox, jsonOf, mallory, type Sandbox, sandbox } from './helpers.js';

// A user's system that segfaults whenever it is started again after a kill, and so crash-loops
// until a fresh start (test/fixtures/systems/segfault-on-restart.ts): three schedules each kill
// the primary, the heal starts it again and it dies of SIGSEGV, saying so, and the system never
// serves again. That was 9 bug records (a crash text, an exit and a no-recovery per schedule); it
// is one root cause, so one finding with three hits and all three pieces of evidence.

interface Hit {
  readonly schedule: number;
  readonly foundAtMs: number;
  readonly message: string;
}

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly bugs: readonly {
    readonly id: number;
    readonly kind: string;
    readonly name: string;
    readonly schedule: number;
    readonly evidence: unknown;
    readonly signature?: string;
    readonly hits?: readonly Hit[];
    readonly dir: string;
  }[];
}

describe('one root cause, one finding (a system that segfaults after a restart and crash-loops)', () => {
  const box: Sandbox = sandbox();
  const schedule = join(box.store, '..', 'kill-primary.jsonl');
  writeFileSync(schedule, '{"atMs": 500, "f": "kill", "nodes": ["n1"]}\n');
  afterAll(() => {
    disposeSandbox(box);
  });

  it('is 1 finding with its hits and evidence, in the summary, results.json, the report and the terminal', async () => {
    const args = ['run', '--system', 'test/fixtures/systems/segfault-on-restart.ts'];
    args.push('--recovery-timeout', '1s', '--steps', '1', '--step', '1s');
    for (let i = 0; i < 3; i++) args.push('--schedule', schedule);
    args.push('--seed', '1', '--time', '2m', '--store', box.store, '--json');
    const r = await mallory(args, box, 180_000);
    const summary = jsonOf(r) as Summary;
    expect(summary.status, r.stderr).toBe('complete');
    expect(r.code).toBe(1);

    expect(summary.bugs.map((b) => `${b.kind}/${b.name}`)).toEqual(['crash/crash-text']);
    const [bug] = summary.bugs;
    expect(bug.schedule).toBe(0);
    expect(bug.hits?.map((h) => h.schedule)).toEqual([0, 1, 2]);
    const evidence = bug.evidence as CrashEvidence;
    expect(evidence.nodes).toEqual(['n1']);
    expect(evidence.pieces.map((p) => `${p.kind}/${p.name}`)).toEqual([
      'crash/crash-text',
      'crash/unexpected-exit',
      'recovery/no-recovery',
    ]);
    expect(evidence.pieces[1].message).toContain('signal SIGSEGV');
    // The fleet report groups by the same signature (a fleet worker records this one).
    expect(findingSignature(bug as Parameters<typeof findingSignature>[0])).toBe(bug.signature);
    expect(bug.signature).toBe('crash/crash-text crash-text+no-recovery+unexpected-exit');

    // One record on disk, the first hit's: its schedule is what replay and shrink run.
    expect(readdirSync(join(summary.runDir, 'bugs'))).toEqual([String(bug.id)]);
    const header = JSON.parse(readFileSync(join(bug.dir, 'schedule.jsonl'), 'utf8').split('\n')[0]) as {
      mallory: { schedule: number; finding: { kind: string; name: string } };
    };
    expect(header.mallory).toMatchObject({ schedule: 0, finding: { kind: 'crash', name: 'crash-text' } });

    const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
      counts: { bugs: number; bugHits: number };
      bugs: { hits: Hit[]; signature: string }[];
    };
    expect(results.counts).toMatchObject({ bugs: 1, bugHits: 3 });
    expect(results.bugs[0].hits.map((h) => h.schedule)).toEqual([0, 1, 2]);
    expect(results.bugs[0].signature).toBe(bug.signature);
    const report = join(summary.runDir, 'report.html');
    expect(existsSync(report)).toBe(true);
    expect(readFileSync(report, 'utf8')).toContain('found again by 2 more schedules (2, 3)');

    // The terminal's last lines count findings, not records.
    expect(r.stderr).toMatch(/, 1 bugs\n/);
    expect(r.stderr).toContain('(3 hits: schedules 1, 2, 3)');

    // Replay runs the first hit's schedule and finds the same finding again (on empty data dirs:
    // the checkpoint holds data the nodes ran on, which this system cannot start again on).
    const replayArgs = ['replay', bug.dir, '--repeat', '1', '--fresh', '--store', box.store, '--json'];
    const replay = await mallory(replayArgs, box, 120_000);
    expect(jsonOf(replay)).toMatchObject({ reproduced: 1 });
  });
});
