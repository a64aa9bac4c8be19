import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';

import { mallory, type Sandbox, sandbox, disposeSandbox, jsonOf } from '../../e2e/helpers.js';
import { skipReason } from '../_helpers/cluster.js';

// etcd is the negative control: membership faults must never make it look guilty. A joiner is
// started only once the cluster has accepted it, and an add no quorum can accept is a failed fault.

const SCHEDULES = join(import.meta.dirname, 'schedules');
const reason = skipReason(['etcd']);
const NODES = ['n1', 'n2', 'n3'];

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly bugs: readonly { kind: string; name: string; message: string }[];
}

interface HistoryLine {
  readonly process: string;
  readonly f: string;
  readonly value: unknown;
  readonly error?: string;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

/** Runs one schedule from `schedules/` on real etcd; the summary and the nemesis's history lines. */
async function run(
  name: string,
  steps = 8,
): Promise<{ code: number | null; summary: Summary; nemesis: HistoryLine[] }> {
  const box = sandbox();
  boxes.push(box);
  const schedule = join(SCHEDULES, `${name}.jsonl`);
  const args = ['run', '--system', 'etcd', '--schedule', schedule, '--time', '90s', '--steps', String(steps)];
  const r = await mallory([...args, '--seed', '3', '--store', box.store, '--json'], box, 180_000);
  expect(r.stdout, r.stderr).not.toBe('');
  const summary = jsonOf(r) as Summary;
  const nemesis = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as HistoryLine)
    .filter((op) => op.process === 'nemesis');
  return { code: r.code, summary, nemesis };
}

it.skipIf(reason !== undefined)(
  `etcd: a member-add while the majority is paused is skipped at once, starts nothing, and no bug is reported${reason ? ` (skipped: ${reason})` : ''}`,
  async () => {
    const { code, summary, nemesis } = await run('paused-majority-add');

    expect(summary.status).toBe('complete');
    expect(summary.bugs).toEqual([]);
    expect(code).toBe(0);
    const removals = nemesis.filter((op) => op.f === 'member-remove' && Array.isArray(op.value));
    expect(removals.map((op) => op.value)).toEqual([['n1'], [expect.stringMatching(/^n[123]$/) as string]]);
    const leader = (removals[1].value as string[])[0];
    // No quorum can accept it (etcd's changes commit through a majority): the add is not even
    // proposed, where it used to wait out three proposals' timeouts and then fail.
    const skippedAdd = nemesis.find((op) => op.f === 'member-add' && op.error !== undefined);
    const others = NODES.filter((n) => n !== leader);
    expect(skippedAdd?.error).toBe(
      `2 of 2 members are killed or paused (${others.join(', ')}): no membership change can commit without a majority`,
    );

    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const faults = db.prepare('SELECT f, outcome FROM faults ORDER BY id').all();
    db.close();
    expect(faults).toEqual([
      { f: 'member-remove', outcome: 'ok' },
      { f: 'member-add', outcome: 'ok' },
      { f: 'member-remove', outcome: 'ok' },
      { f: 'pause', outcome: 'ok' },
      { f: 'member-add', outcome: 'skipped' },
    ]);
    // No joiner was ever refused: each started only once its cluster listed it.
    for (const node of NODES) {
      expect(readFileSync(join(summary.runDir, 'nodes', node, 'stderr.log'), 'utf8')).not.toContain(
        'error validating peerURLs',
      );
    }
  },
);

it.skipIf(reason !== undefined)(
  `etcd: a joiner that cannot reach its peers stops, which is no bug, and the reset brings it in${reason ? ` (skipped: ${reason})` : ''}`,
  async () => {
    // 20 steps (50 s): the joiner gives up only after etcd's 10 s discovery timeout, which starts
    // once the add is through (up to 15 s after its line if a leader election drops the first
    // proposals); the exit must come inside the schedule.
    const { code, summary, nemesis } = await run('isolated-join', 20);

    expect(summary.status).toBe('complete');
    expect(summary.bugs).toEqual([]);
    expect(code).toBe(0);
    expect(nemesis.filter((op) => op.f.startsWith('member-') && op.error !== undefined)).toEqual([]);
    expect(nemesis.filter((op) => op.f === 'membership-exit')).toEqual([
      expect.objectContaining({
        value: ['n3'],
        error: expect.stringContaining('cannot fetch cluster info from peer urls') as string,
      }),
    ]);
    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const recovered = db.prepare('SELECT recovery_ms FROM schedules').all();
    db.close();
    expect(recovered).toEqual([{ recovery_ms: expect.any(Number) as number }]);
  },
);
