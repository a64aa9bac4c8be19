import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { readRoles } from '../../src/store/role-file.js';
import { disposeSandbox, jsonOf, mallory, REPO, registryFiles, type Sandbox, sandbox } from './helpers.js';

const SCHEDULES = join(REPO, 'test', 'systems', 'kvraft', 'schedules');
/** Schedule 1 removes n3 (the reset adds it back, wiped, as a joiner); schedule 2 restarts it. */
const FIRST = join(SCHEDULES, 'rejoined-restart-assert.1.jsonl');
const SECOND = join(SCHEDULES, 'rejoined-restart-assert.2.jsonl');
const BUG = 'rejoined-restart-assert';

interface RunJson {
  readonly bugs: readonly {
    readonly dir: string;
    readonly schedule: number;
    readonly kind: string;
    readonly name: string;
  }[];
  readonly checkpoints?: {
    readonly taken: number;
    readonly kept: readonly { readonly schedule: number; readonly bug: boolean }[];
    readonly pauseMsMedian: number | null;
  };
}

interface ReplayJson {
  readonly start: {
    readonly kind: string;
    readonly dir?: string;
    readonly schedule?: number;
    readonly reason?: string;
  };
  readonly reproduced: number;
  readonly tries: readonly { readonly found: readonly string[] }[];
}

interface ShrinkJson {
  readonly after?: { readonly faults: number; readonly reproduced: number };
  readonly shrunk?: string;
  readonly start?: { readonly kind: string };
}

describe('replay from the checkpoint of the bug schedule (kvraft, real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('a bug that needs what schedule 1 left reproduces from its checkpoint, never fresh; shrink keeps the checkpoint', async () => {
    const box = sandbox();
    boxes.push(box);
    const common = ['--steps', '3', '--time', '5m', '--seed', '3', '--store', box.store];
    const run = await mallory(
      ['run', '--bug', BUG, '--schedule', FIRST, '--schedule', SECOND, ...common, '--json'],
      box,
    );
    expect(run.code, run.stderr).toBe(1);
    const summary = jsonOf(run) as RunJson;
    const bug = summary.bugs.find((b) => b.kind === 'crash' && b.name === 'crash-text');
    expect(bug, JSON.stringify(summary.bugs)).toBeDefined();
    expect(bug?.schedule).toBe(1);
    expect(summary.checkpoints?.taken).toBe(2);
    expect(summary.checkpoints?.kept.find((k) => k.schedule === 1)?.bug).toBe(true);
    const bugDir = bug!.dir;
    // kvraft's probe events gave its nodes' roles: some node led, by its own account.
    const runDir = resolve(bugDir, '..', '..');
    const led = ['n1', 'n2', 'n3'].filter((n) =>
      (readRoles(runDir, n) ?? []).some((l) => l.role === 'leader'),
    );
    expect(led.length).toBeGreaterThan(0);
    const header = (
      JSON.parse(readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8').split('\n')[0]) as {
        mallory: { checkpoint?: string };
      }
    ).mallory;
    expect(header.checkpoint).toBe('../../checkpoints/1');
    const checkpointDir = resolve(bugDir, header.checkpoint!);
    expect(readdirSync(checkpointDir).sort()).toEqual(['checkpoint.json', 'n1', 'n2', 'n3']);

    const fromCheckpoint = await mallory(
      ['replay', bugDir, '--repeat', '3', '--store', box.store, '--json'],
      box,
    );
    const replayed = jsonOf(fromCheckpoint) as ReplayJson;
    expect(replayed.start).toEqual({ kind: 'checkpoint', dir: checkpointDir, schedule: 1 });
    expect(fromCheckpoint.stderr).toContain(`start: from the checkpoint of schedule 2 (${checkpointDir})`);
    expect(replayed.reproduced, fromCheckpoint.stderr).toBeGreaterThanOrEqual(2);
    // The replay's keys are ones the checkpoint holds no value for: nothing but the crash is found.
    for (const t of replayed.tries)
      expect(t.found.filter((f) => f.startsWith('linearizability/'))).toEqual([]);

    const fresh = await mallory(
      ['replay', bugDir, '--repeat', '3', '--fresh', '--store', box.store, '--json'],
      box,
    );
    const freshly = jsonOf(fresh) as ReplayJson;
    expect(freshly.start).toEqual({ kind: 'fresh', reason: '--fresh' });
    expect(freshly.reproduced).toBe(0);
    // Both starts tried: the bug's record says the finding depends on what schedule 1 left.
    expect(fresh.stderr).toContain(
      `the finding depends on the state the schedules before it left: from its checkpoint ${replayed.reproduced}/3, from empty data dirs 0/3`,
    );
    const report = await mallory(['report', resolve(bugDir, '..', '..')], box);
    expect(report.code, report.stderr).toBe(0);
    const results = JSON.parse(readFileSync(resolve(bugDir, '..', '..', 'results.json'), 'utf8')) as {
      bugs: { id: number; checkpoint: string | null; replays?: { dependsOnState: boolean } }[];
    };
    const recorded = results.bugs.find((b) => b.checkpoint === checkpointDir && b.replays !== undefined);
    expect(recorded?.replays?.dependsOnState).toBe(true);
    expect(readFileSync(resolve(bugDir, '..', '..', 'report.html'), 'utf8')).toContain(
      '<p class="depends">the finding depends on the state the schedules before it left',
    );

    // Shrink starts every try from the checkpoint too: the bug's own schedule reproduces there (never
    // fresh). Whether kill alone keeps the bug depends on when the reset's restart of n3 asserts
    // against the schedule's log check, so the shrink may or may not be kept by its final check.
    const shrink = await mallory(['shrink', bugDir, '--repeat', '1', '--store', box.store, '--json'], box);
    const shrunk = jsonOf(shrink) as ShrinkJson & { before: { reproduced: number } };
    expect(shrunk.start?.kind).toBe('checkpoint');
    expect(shrunk.before.reproduced).toBe(1);
    // Candidates live one dir down: their header names the same checkpoint from there.
    const candidate = JSON.parse(readFileSync(join(bugDir, 'shrink', '1.jsonl'), 'utf8').split('\n')[0]) as {
      mallory: { checkpoint: string };
    };
    expect(resolve(bugDir, 'shrink', candidate.mallory.checkpoint)).toBe(checkpointDir);
    if (shrunk.shrunk !== undefined) {
      expect(shrink.code).toBe(0);
      expect(shrunk.after?.reproduced).toBe(1);
      const shrunkHeader = (
        JSON.parse(readFileSync(shrunk.shrunk, 'utf8').split('\n')[0]) as { mallory: { checkpoint?: string } }
      ).mallory;
      expect(resolve(bugDir, shrunkHeader.checkpoint!)).toBe(checkpointDir);
    } else {
      // The final check decided: nothing written, and it said so.
      expect(shrink.code).toBe(1);
      expect(shrunk.after?.reproduced).toBe(0);
      expect(existsSync(join(bugDir, 'shrunk.jsonl'))).toBe(false);
    }

    // The same checkpoint without the switch: a run started on it is clean.
    const clean = await mallory(
      ['run', '--from-checkpoint', checkpointDir, '--schedule', SECOND, ...common, '--json'],
      box,
    );
    expect(clean.code, clean.stderr).toBe(0);
    expect((jsonOf(clean) as RunJson).bugs).toEqual([]);
    expect(registryFiles(box)).toEqual([]);
  }, 600_000);

  it('falls back to a fresh start, saying why, when the checkpoint is gone; refuses one that is not whole', async () => {
    const box = sandbox();
    boxes.push(box);
    const common = ['--steps', '3', '--time', '5m', '--seed', '4', '--store', box.store];
    const run = await mallory(
      [
        'run',
        '--bug',
        BUG,
        '--schedule',
        FIRST,
        '--schedule',
        SECOND,
        ...common,
        '--checkpoints',
        '1',
        '--json',
      ],
      box,
    );
    expect(run.code, run.stderr).toBe(1);
    const bugDir = (jsonOf(run) as RunJson).bugs[0].dir;
    const checkpointDir = resolve(bugDir, '..', '..', 'checkpoints', '1');
    // A copy that never finished has no manifest: it is not a checkpoint.
    const manifest = join(checkpointDir, 'checkpoint.json');
    const { rmSync } = await import('node:fs');
    rmSync(manifest);
    const refused = await mallory(
      ['run', '--from-checkpoint', checkpointDir, '--schedule', SECOND, ...common],
      box,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(
      `mallory: cannot start from a checkpoint: ${checkpointDir} has no checkpoint.json (a copy that never finished)`,
    );
    const replay = await mallory(['replay', bugDir, '--store', box.store, '--json'], box);
    const replayed = jsonOf(replay) as ReplayJson;
    expect(replayed.start.kind).toBe('fresh');
    expect(replayed.start.reason).toContain('has no checkpoint.json');
    expect(replayed.reproduced).toBe(0);
    // --checkpoints 1: the first schedule's checkpoint went when the second's was taken.
    expect(existsSync(resolve(bugDir, '..', '..', 'checkpoints', '0'))).toBe(false);
  }, 600_000);
});
