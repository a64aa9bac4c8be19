import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { ResultsSchema } from '../../src/report/results.js';
import { sequenceStats } from '../../src/report/sequence-stats.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { readStoredRun } from '../../src/store/run-reader.js';
import { RunStore } from '../../src/store/run-store.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/**
 * A `corpus` run of three schedules of four steps through the real store: schedule 1 replayed a
 * kept sequence. New states: schedule 0 steps 0–2, schedule 1 steps 0, 1 and 3, schedule 2 step 0;
 * schedule 2's last window never arrived (no state).
 */
function corpusRun(replayed: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'mallory-sequence-stats-'));
  roots.push(root);
  const run = RunStore.create(join(root, 'store'), {
    id: 'corpus',
    system: 'kvraft',
    seed: 1,
    policy: 'corpus',
    config: { steps: 4, stepMs: 1000 },
  });
  const fresh = [
    [true, true, true, false],
    [true, true, false, true],
    [true, false, false, null],
  ];
  fresh.forEach((windows, schedule) => {
    run.scheduleStarted(schedule, schedule * 5000);
    if (replayed && schedule === 1) {
      run.scheduleFollowed(1, {
        mutation: 'cut',
        steps: [{ fault: { f: 'kill', value: 'leader' }, armed: null }],
      });
    }
    windows.forEach((isNew, step) => {
      const state = isNew === null ? null : isNew ? `s${schedule}-${step}` : 's0-0';
      run.step({
        schedule,
        step,
        startedMs: schedule * 5000 + step * 1000,
        endedMs: schedule * 5000 + (step + 1) * 1000,
        fault: 'kill:leader',
        state,
        stateArrived: state !== null,
        reward: isNew ? 0 : -1,
        metrics: null,
      });
      if (isNew) run.state('causal', state!, [], schedule, step);
    });
    run.scheduleEnded(schedule, schedule * 5000 + 4500, 0, { findings: 0 }, 10);
  });
  run.finish('complete', { elapsedMs: 15_000, metrics: { states_causal: 7 } });
  run.close();
  return run.dir;
}

describe('replayed fault sequences against own decisions', () => {
  it('counts schedules, windows with a state and new states per group', () => {
    const stored = readStoredRun(corpusRun(true));
    expect(stored.schedules.map((s) => s.followed)).toEqual([false, true, false]);
    expect(sequenceStats(stored.schedules, stored.steps)).toEqual({
      replayed: { schedules: 1, windows: 4, newStates: 3 },
      own: { schedules: 2, windows: 7, newStates: 4 },
    });
  });

  it('is absent for a run that replayed none, and for a run stored before the column existed', () => {
    const none = readStoredRun(corpusRun(false));
    expect(sequenceStats(none.schedules, none.steps)).toBeUndefined();
    const dir = corpusRun(true);
    const db = new Database(join(dir, 'run.db'));
    db.exec('ALTER TABLE schedules DROP COLUMN followed');
    db.close();
    const old = readStoredRun(dir);
    expect(old.schedules.map((s) => s.followed)).toEqual([false, false, false]);
    expect(sequenceStats(old.schedules, old.steps)).toBeUndefined();
  });

  it("puts them in the run's results.json and report.html", async () => {
    const { json, html } = await writeRunReport(corpusRun(true));
    const results = ResultsSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    expect(results.sequences).toEqual({
      replayed: { schedules: 1, windows: 4, newStates: 3 },
      own: { schedules: 2, windows: 7, newStates: 4 },
    });
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<h2 id="sequences">Replayed fault sequences</h2>');
    expect(page).toContain(
      '<tr><td>replayed a kept sequence</td><td>1</td><td>4</td><td>3</td><td>0.75</td></tr>',
    );
    expect(page).toContain('<tr><td>own decisions</td><td>2</td><td>7</td><td>4</td><td>0.57</td></tr>');
    const plain = await writeRunReport(corpusRun(false));
    expect(readFileSync(plain.html, 'utf8')).not.toContain('id="sequences"');
  });
});
