import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import {
  explainExit,
  disposeSandbox,
  mallory,
  REPO,
  registryFiles,
  type Sandbox,
  sandbox,
  jsonOf,
} from './helpers.js';

/** kvraft re-exported from a file outside src/, with log rules of its own: loaded through tsx. */
const OUTSIDE = join(REPO, 'test', 'fixtures', 'systems', 'kvraft-outside.ts');
const SCHEDULE = join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'ack-before-commit.jsonl');

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly system: string;
  readonly schedules: number;
  readonly ops: { readonly ok: number };
  readonly bugs: readonly { readonly dir: string; readonly name: string }[];
}

describe('mallory run --system PATH (a system defined outside the repo, real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('runs a campaign on a system loaded from a .ts file and records its path in the run', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      ['run', '--system', 'test/fixtures/systems/kvraft-outside.ts', '--time', '12s', '--steps', '4'].concat([
        '--seed',
        '5',
        '--policy',
        'random',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect(r.stderr).toContain('run dir');
    expect(r.code, explainExit(r)).toBe(0);
    const summary = jsonOf(r) as Summary;
    expect(summary.status).toBe('complete');
    expect(summary.system).toBe('kvraft-outside');
    expect(summary.runDir).toContain(join(box.store, 'kvraft-outside'));
    expect(summary.ops.ok).toBeGreaterThan(100);
    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const run = db.prepare('SELECT system, config FROM run').get() as { system: string; config: string };
    db.close();
    expect(run.system).toBe('kvraft-outside');
    expect((JSON.parse(run.config) as { system: string }).system).toBe(OUTSIDE);
    // The nodes' own output is kept per node (which node votes and which leads varies run to run).
    const log = readFileSync(join(summary.runDir, 'nodes', 'n1', 'stdout.log'), 'utf8');
    expect(log).toMatch(/ n1 (vote-granted|become-leader|become-follower) term=\d+/);
    expect(registryFiles(box)).toEqual([]);
  });

  it('a bug found on a path-loaded system records its absolute path, and replays from the bug directory', async () => {
    const box = sandbox();
    boxes.push(box);
    const found = await mallory(
      ['run', '--system', 'test/fixtures/systems/kvraft-outside.ts', '--bug', 'ack-before-commit']
        .concat(['--schedule', SCHEDULE, '--steps', '6', '--time', '5m', '--seed', '7'])
        .concat(['--store', box.store, '--json']),
      box,
    );
    expect(found.code, found.stderr).toBe(1);
    const bugDir = (jsonOf(found) as Summary).bugs[0].dir;
    const header = (
      JSON.parse(readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8').split('\n')[0]) as {
        mallory: { system: string };
      }
    ).mallory;
    expect(header.system).toBe(OUTSIDE);
    const replay = await mallory(['replay', bugDir, '--store', box.store], box);
    expect(replay.stderr).toContain(`on ${OUTSIDE}`);
    expect(replay.stdout).toMatch(/^reproduced [01]\/1 \(linearizability\/not-linearizable\)$/m);
    expect([0, 1]).toContain(replay.code);
  });

  it('a module that is not a system is one line on stderr and exit 2', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(['run', '--system', 'src/core/clock.ts', '--store', box.store], box);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'mallory: --system src/core/clock.ts: the module exports no system definition: export default (or export const system) a SystemDefinition {name, defaultNodes, bugs, create}\n',
    );
  });
});
