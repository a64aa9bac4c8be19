import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, jsonOf, mallory, registryFiles, type Sandbox, sandbox } from './helpers.js';

interface FaultRow {
  readonly schedule: number;
  readonly f: string;
  readonly value: string | null;
  readonly nodes: string;
  readonly outcome: string;
}

describe('--faults kill:one on a real cluster', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('never kills more than one node, nor leaves more than one down at once', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      ['run', '--system', 'kvraft', '--faults', 'kill:one', '--policy', 'random', '--seed', '11'].concat([
        '--time',
        '20s',
        '--steps',
        '8',
        '--step',
        '1s',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect([0, 1], r.stderr).toContain(r.code);
    const { runDir, ops } = jsonOf(r) as { runDir: string; ops: { fail: number; refused: number } };
    // Clients bound to the killed node are refused at once: counted apart, in the summary and results.json.
    expect(ops.refused).toBeGreaterThan(0);
    const results = JSON.parse(readFileSync(join(runDir, 'results.json'), 'utf8')) as {
      counts: { ops: { fail: number; refused: number } };
    };
    expect(results.counts.ops).toMatchObject({ fail: ops.fail, refused: ops.refused });
    expect(r.stderr).toMatch(/ fail \d+ \+ [1-9]\d* refused/);
    const db = new Database(join(runDir, 'run.db'), { readonly: true });
    const rows = db
      .prepare('SELECT schedule, f, value, nodes, outcome FROM faults ORDER BY rowid')
      .all() as FaultRow[];
    const config = JSON.parse((db.prepare('SELECT config FROM run').get() as { config: string }).config) as {
      faultTargets: unknown;
    };
    db.close();
    expect(config.faultTargets).toEqual({ kill: ['one'] });
    const kills = rows.filter((row) => row.f === 'kill' && row.outcome === 'ok');
    expect(kills.length).toBeGreaterThan(1);
    expect(rows.filter((row) => row.f === 'kill').every((row) => row.value === '"one"')).toBe(true);
    let schedule = -1;
    const down = new Set<string>();
    for (const row of rows) {
      if (row.schedule !== schedule) {
        schedule = row.schedule;
        down.clear(); // the reset between schedules starts every node
      }
      if (row.outcome !== 'ok') continue;
      const nodes = JSON.parse(row.nodes) as string[];
      if (row.f === 'kill') {
        expect(nodes).toHaveLength(1);
        for (const n of nodes) down.add(n);
      }
      if (row.f === 'start') for (const n of nodes) down.delete(n);
      expect(down.size).toBeLessThanOrEqual(1);
    }
    expect(registryFiles(box)).toEqual([]);
  });

  it('an unknown target is one line listing the valid ones, exit 2', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(['run', '--faults', 'kill:most,partition', '--store', box.store], box);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'mallory: --faults: unknown target "kill:most": kill takes kill:one, kill:minority, kill:majority, kill:all, kill:leader\n',
    );
  });
});
