import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { RunVerdict } from '../../src/core/verdict.js';
import type { Results } from '../../src/report/results.js';
import { latestRun } from '../../src/store/run-store.js';

import {
  findBug,
  mallory,
  REPO,
  registryFiles,
  type Sandbox,
  sandbox,
  disposeSandbox,
  jsonOf,
} from './helpers.js';

const SCHEDULE = join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'ack-before-commit.jsonl');

interface ReplayJson {
  readonly finding: { readonly kind: string; readonly name: string };
  readonly reproduced: number;
  readonly tries: readonly { readonly reproduced: boolean; readonly runDir: string }[];
}

describe('mallory replay (kvraft, real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('reruns a bug from its directory alone and says how often it reproduced', async () => {
    const box = sandbox();
    boxes.push(box);
    const { run: found, bugDir } = await findBug(box, SCHEDULE);
    // The run's verdict: invalid, from the linearizability check of its one schedule, everywhere.
    const summary = jsonOf(found) as { runDir: string; verdict: RunVerdict };
    expect(summary.verdict.valid).toBe(false);
    expect(found.stderr).toMatch(
      /verdict: invalid — crash 1\/1 valid, recovery 1\/1 valid, linearizable 0\/1 valid \(1 invalid\)/,
    );
    const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as Results;
    expect(results.verdict).toEqual(summary.verdict);
    const linearizable = results.schedules[0].checkers.find((c) => c.checker === 'linearizable');
    expect(linearizable).toMatchObject({ valid: false, findings: ['linearizability/not-linearizable'] });
    expect(linearizable?.ops).toBeGreaterThan(0);
    // The replay command is printed under the BUG line.
    expect(found.stderr).toContain(`replay:   ./bin/mallory.js replay ${bugDir} --repeat 10`);
    expect(found.stderr).toContain(`shrink:   ./bin/mallory.js shrink ${bugDir}`);
    // The bug's schedule file says how to run it: system, nodes, switches, seed, what it found.
    const [header] = readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8').split('\n');
    expect(JSON.parse(header)).toMatchObject({
      mallory: {
        system: 'kvraft',
        nodes: 3,
        seed: 7,
        bugs: ['ack-before-commit'],
        steps: 6,
        finding: { kind: 'linearizability', name: 'not-linearizable' },
      },
    });

    const replay = await mallory(['replay', bugDir, '--repeat', '2', '--store', box.store, '--json'], box);
    expect(replay.code, replay.stderr).toBe(1);
    const result = jsonOf(replay) as ReplayJson;
    expect(result.finding).toEqual({ kind: 'linearizability', name: 'not-linearizable' });
    expect(result.tries).toHaveLength(2);
    expect(result.reproduced).toBe(result.tries.filter((t) => t.reproduced).length);
    expect(result.reproduced).toBeGreaterThanOrEqual(1);
    expect(replay.stderr).toMatch(/replay 2\/2: (reproduced|not reproduced)/);
    // One line per try (and two saying what it replays and where it starts), not each try's
    // campaign: that is --verbose. The bug's run took a checkpoint of its one schedule.
    const lines = replay.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^mallory replay: linearizability\/not-linearizable on kvraft \(3 nodes/);
    expect(lines[1]).toBe(
      `  start: from the checkpoint of schedule 1 (${join(bugDir, '..', '..', 'checkpoints', '0')})`,
    );
    expect(lines.slice(2).map((l) => /^replay (\d)\/2: /.exec(l)?.[1])).toEqual(['1', '2']);
    // Every line of the schedule ran: the cluster's start does not eat into the schedule's time.
    for (const t of result.tries) {
      expect(readFileSync(join(t.runDir, 'history.jsonl'), 'utf8')).not.toContain('past the end of the run');
    }
    // Each try's run says which bug of which run it replays, and the store's index lists it under
    // that bug, not as a campaign.
    const runDir = join(bugDir, '..', '..');
    result.tries.forEach((t, i) => {
      const tried = JSON.parse(readFileSync(join(t.runDir, 'results.json'), 'utf8')) as Results;
      expect(tried.run.replayOf).toEqual({
        kind: 'replay',
        bugDir,
        run: runDir,
        bug: 1,
        finding: { kind: 'linearizability', name: 'not-linearizable' },
        try: i,
      });
    });
    const index = readFileSync(join(box.store, 'index.html'), 'utf8');
    expect(index.match(/<tr class="campaign">/g)).toHaveLength(1);
    expect(index).toContain(
      `bug #1 (linearizability/not-linearizable): 2 replay tries, ${result.reproduced} reproduced`,
    );
    expect(registryFiles(box)).toEqual([]);
  });

  it('the same schedule with the switch off does not reproduce it', async () => {
    const box = sandbox();
    boxes.push(box);
    const { bugDir } = await findBug(box, SCHEDULE);
    // A replay runs what the header says: drop the switch from it, and the bug is gone.
    const file = join(bugDir, 'schedule.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[0] = lines[0].replace('"bugs":["ack-before-commit"]', '"bugs":[]');
    rmSync(join(bugDir, 'source-schedule.jsonl'));
    writeFileSync(file, lines.join('\n'));
    const replay = await mallory(['replay', bugDir, '--store', box.store], box);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout.trim()).toBe('reproduced 0/1 (linearizability/not-linearizable)');
    // Its try, a run of the same schedule without the switch: every check valid.
    const tryDir = latestRun(box.store)!;
    const results = JSON.parse(readFileSync(join(tryDir, 'results.json'), 'utf8')) as Results;
    expect(results.verdict.valid).toBe(true);
    expect(results.schedules.map((sv) => sv.checkers.map((c) => [c.checker, c.valid]))).toEqual([
      [
        ['crash', true],
        ['recovery', true],
        ['linearizable', true],
        ['invariants', true],
      ],
    ]);
  });

  it('refuses what is not a bug directory with one line', async () => {
    const box = sandbox();
    boxes.push(box);
    for (const dir of [box.store, '/nonexistent']) {
      const r = await mallory(['replay', dir], box);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(
        `mallory: ${dir} is not a bug directory (no schedule.jsonl): give store/<system>/<run>/bugs/<id>`,
      );
    }
  });
});
