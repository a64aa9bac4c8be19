import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { disposeSandbox, mallory, type Sandbox, sandbox, jsonOf } from './helpers.js';

// A system that declares its reads sequential (examples/tiny-kv with follower reads: followers
// answer from a copy that lags the primary) against the same server without the declaration, and
// with a lost write on top: real processes, real HTTP, one fixed schedule.

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly ops: { readonly ok: number };
  readonly bugs: readonly { readonly kind: string; readonly name: string; readonly message: string }[];
}

/**
 * n3 cut off from the primary for 3 s (its copy goes stale), then the primary killed and restarted
 * three times: with ack-before-persist each kill forgets up to a second of acknowledged writes, and
 * three of them leave a lost write seen by its own writer even on a slow machine.
 */
const SCHEDULE = [
  '{"atMs": 1500, "f": "start-partition", "groups": [["n3"], ["*"]]}',
  '{"atMs": 4500, "f": "stop-partition"}',
  '{"atMs": 6000, "f": "kill", "nodes": ["n1"]}',
  '{"atMs": 6500, "f": "start", "nodes": ["n1"]}',
  '{"atMs": 8500, "f": "kill", "nodes": ["n1"]}',
  '{"atMs": 9000, "f": "start", "nodes": ["n1"]}',
  '{"atMs": 11000, "f": "kill", "nodes": ["n1"]}',
  '{"atMs": 11500, "f": "start", "nodes": ["n1"]}',
].join('\n');

/**
 * The same stale follower, and the primary killed 200 ms before the schedule's end; the heal
 * restarts it, and with rollback-on-restart it undoes its last 20 acknowledged updates. Hardly
 * anyone reads in between: the final reads, once the nodes agree (or the time for that is up), are
 * what must see the loss.
 */
const LATE_ROLLBACK = [
  '{"atMs": 1500, "f": "start-partition", "groups": [["n3"], ["*"]]}',
  '{"atMs": 4500, "f": "stop-partition"}',
  '{"atMs": 9900, "f": "kill", "nodes": ["n1"]}',
].join('\n');

describe('what a system declares its reads promise (tiny-kv, real processes)', () => {
  const box: Sandbox = sandbox();
  const schedule = join(box.store, '..', 'follower-reads.jsonl');
  writeFileSync(schedule, SCHEDULE + '\n');
  const lateRollback = join(box.store, '..', 'late-rollback.jsonl');
  writeFileSync(lateRollback, LATE_ROLLBACK + '\n');
  afterAll(() => {
    disposeSandbox(box);
  });

  async function run(...bugs: string[]): Promise<Summary> {
    return runSchedule(schedule, '2.5s', ...bugs);
  }

  async function runSchedule(file: string, step: string, ...bugs: string[]): Promise<Summary> {
    const args = ['run', '--system', 'examples/tiny-kv/system.ts', '--schedule', file, '--steps', '4'];
    args.push('--step', step);
    args.push('--seed', '3', '--time', '5m', '--store', box.store, '--json');
    for (const bug of bugs) args.push('--bug', bug);
    const r = await mallory(args, box, 120_000);
    expect(r.stdout, r.stderr).not.toBe('');
    const summary = jsonOf(r) as Summary;
    expect(summary.status).toBe('complete');
    expect(summary.ops.ok).toBeGreaterThan(200);
    return summary;
  }

  it('stale follower reads the system does not declare are reported', async () => {
    const summary = await run('undeclared-follower-reads');
    expect(summary.bugs.map((b) => `${b.kind}/${b.name}`)).toContain('linearizability/not-linearizable');
    // A stale read, or — when no other read saw the newer value before its key was retired — a
    // lost acknowledged write: the history alone cannot tell the two apart then.
    expect(summary.bugs.map((b) => b.message).join('\n')).toMatch(/stale read|lost acknowledged write/);
  });

  it('the same stale reads, declared sequential, are not', async () => {
    const summary = await run('follower-reads');
    expect(summary.bugs).toEqual([]);
  });

  it('a lost acknowledged write is still reported under sequential reads', async () => {
    const summary = await run('follower-reads', 'ack-before-persist');
    const linearizability = summary.bugs.filter((b) => b.kind === 'linearizability');
    expect(linearizability.length).toBeGreaterThan(0);
    expect(linearizability[0].message).toContain('reads checked as sequential, as the system declares');
  });

  it('acknowledged writes rolled back after the workload stopped are reported under sequential reads', async () => {
    // The final reads are checked as linearizable: before, a final read by a process that had
    // never written the key could be ordered before the lost write, and such a loss passed.
    const summary = await runSchedule(lateRollback, '200ms', 'follower-reads', 'rollback-on-restart');
    const linearizability = summary.bugs.filter((b) => b.kind === 'linearizability');
    expect(linearizability.length, JSON.stringify(summary.bugs)).toBeGreaterThan(0);
    expect(linearizability[0].message).toMatch(/lost acknowledged write|resurrected value|stale read/);
    expect(linearizability[0].message).toContain('reads checked as sequential, as the system declares');
    // The last round of final reads is marked so, on every node.
    const ops = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; f: string; node?: string; final?: boolean });
    const finals = ops.filter((op) => op.final === true && op.type === 'ok');
    expect(new Set(finals.map((op) => op.node))).toEqual(new Set(['n1', 'n2', 'n3']));
    expect(finals.every((op) => op.f === 'read')).toBe(true);
  });
});
