import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { disposeSandbox, mallory, type Sandbox, sandbox, skipReason, jsonOf } from './helpers.js';

interface Summary {
  readonly status: string;
  readonly runDir: string;
  readonly ops: { readonly ok: number };
  readonly bugs: readonly { readonly kind: string; readonly name: string; readonly message: string }[];
}

const scheduleDir = mkdtempSync(join(tmpdir(), 'mallory-e2e-set-counter-'));

/** A fixed schedule file of `lines`. */
function schedule(name: string, lines: readonly object[]): string {
  const file = join(scheduleDir, `${name}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

/** Kill the leader, start it again: a new election mid-schedule. */
const KILL_LEADER = [
  { atMs: 2000, f: 'kill', value: 'leader' },
  { atMs: 5000, f: 'start', value: 'all' },
];
/** Cut the primary off from the other nodes (not from the clients) long enough for a failover. */
const ISOLATE_PRIMARY = [
  { atMs: 1000, f: 'start-partition', value: 'leader' },
  { atMs: 8000, f: 'stop-partition', value: null },
];

function clientOps(runDir: string): Op[] {
  return readFileSync(join(runDir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Op)
    .filter((op) => op.process !== 'nemesis');
}

const REDIS = ['redis-server', 'redis-sentinel'];

async function run(
  boxes: Sandbox[],
  system: string,
  workload: string,
  file: string,
): Promise<{ code: number | null; stderr: string; summary: Summary; ops: Op[] }> {
  const b = sandbox();
  boxes.push(b);
  const r = await mallory(
    [
      'run',
      '--system',
      system,
      '--workload',
      workload,
      '--schedule',
      file,
      '--steps',
      '4',
      '--seed',
      '3',
      '--store',
      b.store,
      '--json',
    ],
    b,
  );
  expect(r.stdout, r.stderr).not.toBe('');
  const summary = jsonOf(r) as Summary;
  return { code: r.code, stderr: r.stderr, summary, ops: clientOps(summary.runDir) };
}

/** Every invocation completes once, under its own process; the keys are the schedule's. */
function expectPaired(ops: readonly Op[], keyPattern: RegExp): void {
  const open = new Map<Op['process'], Op>();
  for (const op of ops) {
    expect(keyPattern.test((op.value as [string, unknown])[0])).toBe(true);
    if (op.type === 'invoke') {
      expect(open.has(op.process)).toBe(false);
      open.set(op.process, op);
    } else {
      expect(open.get(op.process)?.f).toBe(op.f);
      open.delete(op.process);
    }
  }
  expect(open.size).toBe(0);
}

describe('the set and counter workloads against real systems (fixed schedules)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });
  afterAll(() => {
    rmSync(scheduleDir, { recursive: true, force: true });
  });

  it('kvraft set: adds of unique elements and whole-set reads in Jepsen’s shape; a correct Raft passes', async () => {
    const { code, summary, ops } = await run(boxes, 'kvraft', 'set', schedule('kill', KILL_LEADER));
    expect(summary.status).toBe('complete');
    expect(summary.bugs).toEqual([]);
    expect(code).toBe(0);
    expect(new Set(ops.map((op) => op.f))).toEqual(new Set(['add', 'read']));
    expectPaired(ops, /^s0-s\d$/);
    const added = ops
      .filter((op) => op.f === 'add' && op.type === 'invoke')
      .map((op) => op.value as [string, number]);
    expect(added.length).toBeGreaterThan(50);
    expect(added.every(([, e]) => Number.isInteger(e))).toBe(true);
    expect(new Set(added.map(([, e]) => e)).size).toBe(added.length);
    const reads = ops
      .filter((op) => op.f === 'read' && op.type === 'ok')
      .map((op) => op.value as [string, number[]]);
    expect(reads.every(([, elements]) => Array.isArray(elements) && elements.every(Number.isInteger))).toBe(
      true,
    );
    expect(reads.some(([, elements]) => elements.length > 5)).toBe(true);
    // The final reads: the last op on each set is a read that holds every acknowledged add.
    for (const key of new Set(added.map(([k]) => k))) {
      const last = ops.filter((op) => (op.value as [string])[0] === key).at(-1)!;
      expect(last).toMatchObject({ f: 'read', type: 'ok' });
      const held = new Set((last.value as [string, number[]])[1]);
      const acked = ops.filter(
        (op) => op.f === 'add' && op.type === 'ok' && (op.value as [string])[0] === key,
      );
      expect(acked.every((op) => held.has((op.value as [string, number])[1]))).toBe(true);
    }
  });

  it('kvraft counter: atomic adds and reads in Jepsen’s shape; a correct Raft passes', async () => {
    const { code, summary, ops } = await run(boxes, 'kvraft', 'counter', schedule('kill', KILL_LEADER));
    expect(summary.status).toBe('complete');
    expect(summary.bugs).toEqual([]);
    expect(code).toBe(0);
    expect(new Set(ops.map((op) => op.f))).toEqual(new Set(['add', 'read']));
    expectPaired(ops, /^s0-c\d$/);
    const deltas = ops
      .filter((op) => op.f === 'add' && op.type === 'invoke')
      .map((op) => (op.value as [string, number])[1]);
    expect(deltas.length).toBeGreaterThan(50);
    expect(deltas.every((d) => Number.isInteger(d) && d >= 1 && d <= 5)).toBe(true);
    const counts = ops
      .filter((op) => op.f === 'read' && op.type === 'ok')
      .map((op) => (op.value as [string, number])[1]);
    expect(counts.every((n) => Number.isInteger(n) && n >= 0)).toBe(true);
    expect(Math.max(...counts)).toBeGreaterThan(10);
  });

  it.skipIf(skipReason(REDIS) !== undefined)(
    `redis set: isolating the primary fails over and loses acknowledged adds, reported with the ops${skipReason(REDIS) ? ` (skipped: ${skipReason(REDIS)})` : ''}`,
    async () => {
      const { code, summary, ops } = await run(boxes, 'redis', 'set', schedule('isolate', ISOLATE_PRIMARY));
      expect(summary.status).toBe('complete');
      expect(ops.some((op) => op.f === 'add' && op.type === 'ok')).toBe(true);
      const lost = summary.bugs.find((bug) => bug.kind === 'set' && bug.name === 'lost-elements');
      expect(lost?.message).toMatch(
        /^\d+ lost element\(s\) of \d+ added: key "s0-s\d": element \d+ lost: it was added by process \d+'s add/,
      );
      expect(code).toBe(1);
    },
  );

  it.skipIf(skipReason(REDIS) !== undefined)(
    `redis counter: after the isolated primary is demoted, a read is below the acknowledged adds${skipReason(REDIS) ? ` (skipped: ${skipReason(REDIS)})` : ''}`,
    async () => {
      const { code, summary } = await run(boxes, 'redis', 'counter', schedule('isolate', ISOLATE_PRIMARY));
      expect(summary.status).toBe('complete');
      const bug = summary.bugs.find((b) => b.kind === 'counter' && b.name === 'read-out-of-bounds');
      expect(bug?.message).toMatch(
        /^\d+ of \d+ counter reads out of bounds: key "s0-c\d": process \d+'s read \(op \d+, ok at op \d+ on n\d\) returned \d+, below \d+, the sum of the adds acknowledged before it began/,
      );
      expect(code).toBe(1);
    },
  );

  it('a system without the client capability a workload needs is refused at start, in one line', async () => {
    const b = sandbox();
    boxes.push(b);
    const r = await mallory(
      ['run', '--system', 'examples/tiny-kv/system.ts', '--workload', 'set', '--store', b.store],
      b,
      60_000,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mallory: system tiny-kv keeps no sets (a set client, or list-append transactions): use --workload register',
    );
  });
});
