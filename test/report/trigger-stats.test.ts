import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { describeTrigger, parseTrigger, type TriggeredAction } from '../../src/core/trigger.js';
import { ResultsSchema } from '../../src/report/results.js';
import { triggerStats } from '../../src/report/trigger-stats.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { readStoredRun } from '../../src/store/run-reader.js';
import { RunStore } from '../../src/store/run-store.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/**
 * A triggered run of 6 steps through the real store: become-leader armed in steps 0, 1, 2 (fired in
 * 0 and 2, step 2's window new), vote-granted armed in 3 and 4 (fired in 4, its window seen before),
 * a mined log template (`L1/leader`) armed in step 5, not fired.
 */
function triggeredRun(): string {
  const root = mkdtempSync(join(tmpdir(), 'mallory-trigger-stats-'));
  roots.push(root);
  const run = RunStore.create(join(root, 'store'), {
    id: 'triggered',
    system: 'kvraft',
    seed: 3,
    policy: 'triggered',
    config: { steps: 6, stepMs: 1000 },
  });
  run.scheduleStarted(0, 0);
  const armed: (string | null)[] = [
    'kill:leader + on:become-leader>kill:event+0ms',
    'pause:one + on:become-leader>pause:others+5ms',
    'noop + on:become-leader>kill:event+0ms',
    'kill:one + on:vote-granted>start-partition:isolate+50ms',
    'kill:one + on:vote-granted>start-partition:isolate+50ms',
    'kill:leader + on:L1/leader>pause:event+0ms',
  ];
  const states = ['s0', 's1', 's2', 's0', 's1', 's3'];
  armed.forEach((fault, step) => {
    run.step({
      schedule: 0,
      step,
      startedMs: step * 1000,
      endedMs: (step + 1) * 1000,
      fault,
      state: states[step],
      stateArrived: true,
      reward: 0,
      metrics: null,
    });
  });
  // First seen: s0 at step 0, s1 at step 1, s2 at step 2, s3 at step 5.
  for (const [id, step] of [
    ['s0', 0],
    ['s1', 1],
    ['s2', 2],
    ['s3', 5],
  ] as const) {
    run.state('causal', id, [], 0, step);
  }
  const fired = (step: number, f: string, on: string): void => {
    run.fault({
      schedule: 0,
      step,
      atMs: step * 1000 + 400,
      f,
      value: null,
      nodes: ['n2'],
      outcome: 'ok',
      trigger: { atMs: step * 1000, on: { type: on, withinMs: 600 }, f, nodes: ['$E'] },
    });
  };
  run.fault({ schedule: 0, step: 0, atMs: 0, f: 'kill', value: 'leader', nodes: ['n1'], outcome: 'ok' });
  fired(0, 'kill', 'become-leader');
  fired(2, 'kill', 'become-leader');
  fired(4, 'start-partition', 'vote-granted');
  run.saveLogTemplates([{ id: 'L1', tokens: ['raft:', 'became', 'leader', 'at', 'term', '<*>'], size: 4 }]);
  run.scheduleEnded(0, 6000, 0, { findings: 0 }, 10);
  run.finish('complete', { elapsedMs: 6100, metrics: { states_causal: 4 } });
  run.close();
  return run.dir;
}

describe('triggers by event type', () => {
  it('reads a trigger description back', () => {
    const actions: TriggeredAction[] = [
      { on: 'become-leader', f: 'kill', target: 'event', delayMs: 0 },
      { on: 'log:raft>ready', f: 'start-partition', target: 'isolate', delayMs: 50 },
    ];
    for (const a of actions) expect(parseTrigger(describeTrigger(a))).toEqual(a);
    expect(parseTrigger(describeTrigger(null))).toBeUndefined();
    expect(parseTrigger('on:x>kill:nobody+0ms')).toBeUndefined();
  });

  it('counts armed, fired and fired into a new state per event type, highest share fired first', () => {
    const stored = readStoredRun(triggeredRun());
    expect(stored.steps.map((s) => s.newState)).toEqual([true, true, true, false, false, true]);
    expect(triggerStats(stored.steps, stored.faults)).toEqual([
      { on: 'become-leader', armed: 3, fired: 2, firedNewStates: 2 },
      { on: 'vote-granted', armed: 2, fired: 1, firedNewStates: 0 },
      { on: 'L1/leader', armed: 1, fired: 0, firedNewStates: 0 },
    ]);
  });

  it("puts them in the run's results.json and report.html", async () => {
    const dir = triggeredRun();
    const { json, html } = await writeRunReport(dir);
    const results = ResultsSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    expect(results.triggers?.map((t) => [t.on, t.armed, t.fired])).toEqual([
      ['become-leader', 3, 2],
      ['vote-granted', 2, 1],
      ['L1/leader', 1, 0],
    ]);
    // A mined template's id comes with its text.
    expect(results.triggers?.[2].template).toBe('raft: became leader at term <*>');
    expect(results.triggers?.[0].template).toBeUndefined();
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<h2 id="triggers">Triggers by event type</h2>');
    expect(page).toContain('<tr><td>become-leader</td><td>3</td><td>2</td><td>67%</td><td>2</td></tr>');
    expect(page).toContain('<td>L1/leader <code>raft: became leader at term &#60;*&#62;</code></td>');
  });
});
