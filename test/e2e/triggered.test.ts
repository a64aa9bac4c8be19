import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { describeFault, type Fault } from '../../src/core/fault.js';
import { describeTrigger, type TriggeredAction } from '../../src/core/trigger.js';
import { explainExit, disposeSandbox, mallory, type Sandbox, sandbox, jsonOf } from './helpers.js';

describe('mallory run --policy triggered and corpus (kvraft, real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('arms a trigger each step; some fire, recorded with their event in the history and the store', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      ['run', '--policy', 'triggered', '--time', '45s', '--seed', '1', '--store', box.store, '--json'],
      box,
    );
    expect(r.code, explainExit(r)).toBe(0);
    const summary = jsonOf(r) as {
      runDir: string;
      policy: string;
      metrics: Record<string, number>;
    };
    expect(summary.policy).toBe('triggered');
    const m = summary.metrics;
    expect(m.triggers_armed).toBeGreaterThan(0);
    expect(m.triggers_fired).toBeGreaterThan(0);
    expect(m.triggers_fired_pct).toBeCloseTo((100 * m.triggers_fired) / m.triggers_armed, 0);

    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const fired = db
      .prepare('SELECT f, nodes, outcome, trigger FROM faults WHERE trigger IS NOT NULL')
      .all() as {
      f: string;
      trigger: string;
    }[];
    const steps = db.prepare("SELECT fault FROM steps WHERE fault LIKE '% + on:%'").all();
    // How many steps a 45 s run takes depends on the machine; what must hold is that many of them
    // armed a trigger (arming none is one choice among the many actions, so not all of them do).
    const taken = db.prepare('SELECT count(*) AS n FROM steps WHERE fault IS NOT NULL').get() as {
      n: number;
    };
    const values = db.prepare("SELECT count(*) AS n FROM policy_values WHERE action LIKE 'on:%'").get() as {
      n: number;
    };
    db.close();
    expect(fired.length).toBeGreaterThan(0);
    for (const row of fired) {
      const line = JSON.parse(row.trigger) as { on: { type: string; withinMs: number }; f: string };
      expect(line.on.type).not.toBe('');
      expect(line.on.withinMs).toBeGreaterThan(0);
      expect(line.f).toBe(row.f);
    }
    expect(steps.length).toBe(m.triggers_armed);
    expect(taken.n).toBeGreaterThanOrEqual(6);
    expect(m.triggers_armed).toBeGreaterThanOrEqual(Math.ceil(taken.n / 3));
    expect(values.n).toBeGreaterThan(0);
    const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8');
    const triggerOps = history.split('\n').filter((l) => l.includes('"f":"trigger"'));
    expect(triggerOps.length).toBe(fired.length);
    // The run's results.json ranks the event types; its counts add up to the run's.
    const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
      triggers: { on: string; armed: number; fired: number }[];
    };
    const sum = (k: 'armed' | 'fired'): number => results.triggers.reduce((n, t) => n + t[k], 0);
    expect(sum('armed')).toBe(m.triggers_armed);
    expect(sum('fired')).toBe(m.triggers_fired);
  });

  it('--policy corpus replays a kept fault sequence: the schedule enacts and arms what it kept', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      [
        'run',
        '--policy',
        'corpus',
        '--time',
        '40s',
        '--steps',
        '3',
        '--seed',
        '1',
        '--store',
        box.store,
        '--json',
      ],
      box,
    );
    expect(r.code, explainExit(r)).toBe(0);
    const summary = jsonOf(r) as { runDir: string; policy: string; schedules: number };
    expect(summary.policy).toBe('corpus');
    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const followed = db.prepare('SELECT idx, followed FROM schedules WHERE followed IS NOT NULL').all() as {
      idx: number;
      followed: string;
    }[];
    const stepsOf = db.prepare('SELECT step, fault FROM steps WHERE schedule = ? ORDER BY step');
    // The first schedule has nothing to replay; the second replays what the first kept.
    expect(followed.map((f) => f.idx)).toContain(1);
    let compared = 0;
    for (const row of followed) {
      const plan = JSON.parse(row.followed) as {
        mutation: string;
        steps: { fault: Fault | null | 'free'; armed: TriggeredAction | null | 'free' }[];
      };
      expect(['cut', 'drop', 'free', 'splice']).toContain(plan.mutation);
      const steps = stepsOf.all(row.idx) as { step: number; fault: string | null }[];
      for (const s of steps) {
        const p = plan.steps[s.step];
        if (p === undefined || p.fault === 'free' || p.armed === 'free') continue;
        const enacted = s.fault === null ? 'noop' : (JSON.parse(s.fault) as string);
        expect(enacted.startsWith(describeFault(p.fault))).toBe(true);
        // A trigger is armed after the fault, unless the fault took the whole step.
        if (p.armed !== null && enacted.includes(' + '))
          expect(enacted).toContain(` + ${describeTrigger(p.armed)}`);
        compared++;
      }
    }
    db.close();
    expect(compared).toBeGreaterThan(0);
    // Its results.json weighs the replayed schedules against the others.
    const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
      sequences: { replayed: { schedules: number; windows: number }; own: { schedules: number } };
    };
    expect(results.sequences.replayed.schedules).toBe(followed.length);
    expect(results.sequences.replayed.schedules + results.sequences.own.schedules).toBe(summary.schedules);
    expect(results.sequences.replayed.windows).toBeGreaterThan(0);
  });
});
