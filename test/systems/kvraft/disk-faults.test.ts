import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { disposeSandbox, mallory, type Sandbox, sandbox, jsonOf } from '../../e2e/helpers.js';

// kvraft under the disk faults that make it stop by itself, through `mallory run --schedule` with
// every node's data dir under the FUSE disk layer: a node whose disk fails an fsync (EIO) or a
// write (ENOSPC) stops (fail-stop), which is the fault's doing, not a crash; and a node whose last
// append was torn cuts the torn record off its log when it starts again.

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly bugs: readonly { kind: string; name: string; message: string }[];
  readonly ops: { ok: number };
  readonly metrics: Readonly<Record<string, number>>;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

async function run(
  schedule: readonly object[],
  steps: number,
): Promise<{ code: number | null; summary: Summary }> {
  const box = sandbox();
  boxes.push(box);
  const file = join(box.store, '..', 'schedule.jsonl');
  writeFileSync(file, schedule.map((line) => JSON.stringify(line)).join('\n') + '\n');
  const args = ['run', '--time', '5m', '--seed', '7', '--steps', `${steps}`, '--schedule', file];
  const r = await mallory([...args, '--store', box.store, '--json'], box, 180_000);
  expect(r.stdout, r.stderr).not.toBe('');
  return { code: r.code, summary: jsonOf(r) as Summary };
}

function nemesisOps(runDir: string): Op[] {
  return readFileSync(join(runDir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Op)
    .filter((op) => op.process === 'nemesis');
}

function nodeLog(runDir: string, node: string, file: string): string {
  return readFileSync(join(runDir, 'nodes', node, file), 'utf8');
}

/** The schedule's last lines: a kill of n1 finds it running (its ok completion names it), then a start. */
const N1_RUNS_AT = (atMs: number): object[] => [
  { atMs, f: 'kill', value: ['n1'] },
  { atMs: atMs + 500, f: 'start', value: 'all' },
];

/** The kill's completion: `value` the nodes it killed, no `error` (a skip says why in `error`). */
function killedN1(ops: readonly Op[]): boolean {
  return ops.some((op) => op.f === 'kill' && op.error === undefined && JSON.stringify(op.value) === '["n1"]');
}

describe('kvraft stops on a failing disk, and that is no crash', () => {
  const CASES = [
    {
      fault: 'fsync-error',
      refused: /kvraft n1: stopping: the disk refused to .+ \(EIO: /,
      cause: 'fsync-error',
    },
    {
      fault: 'disk-full',
      refused: /kvraft n1: stopping: the disk refused to .+ \(ENOSPC: /,
      cause: 'disk-full',
    },
  ] as const;
  for (const c of CASES) {
    it(`${c.fault} on n1: it stops, the exit is recorded as induced, heal-disk brings it back`, async () => {
      const { code, summary } = await run(
        [
          { atMs: 1000, f: c.fault, value: ['n1'] },
          { atMs: 5000, f: 'heal-disk', value: 'all' },
          ...N1_RUNS_AT(7500),
        ],
        4,
      );
      expect(summary.status).toBe('complete');
      expect(summary.bugs).toEqual([]);
      expect(code).toBe(0);
      expect(nodeLog(summary.runDir, 'n1', 'stderr.log')).toMatch(c.refused);
      const ops = nemesisOps(summary.runDir);
      const induced = ops.filter((op) => op.f === 'induced-exit');
      expect(induced.length).toBeGreaterThan(0);
      for (const op of induced) {
        expect(op.value).toEqual(['n1']);
        expect(op.error).toMatch(new RegExp(`^n1 stopped \\(code 1\\) while ${c.cause} \\(`));
      }
      expect(summary.metrics.induced_exits).toBe(induced.length);
      expect(killedN1(ops)).toBe(true);
      expect(summary.ops.ok).toBeGreaterThan(100);
    });
  }
});

describe('kvraft after a torn write', () => {
  it('n1 stops on a failed fsync, its unsynced append is torn, and it cuts the torn record at its next start', async () => {
    // Twice: a cut can end exactly on a line boundary of a batch of entries, leaving no torn record.
    const cycle = (atMs: number): object[] => [
      { atMs, f: 'fsync-error', value: ['n1'] },
      { atMs: atMs + 2000, f: 'torn-write', value: ['n1'] },
      { atMs: atMs + 2500, f: 'heal-disk', value: 'all' },
    ];
    const { code, summary } = await run([...cycle(1000), ...cycle(5000), ...N1_RUNS_AT(10_000)], 5);
    expect(summary.status).toBe('complete');
    expect(summary.bugs).toEqual([]);
    expect(code).toBe(0);
    const disk = nodeLog(summary.runDir, 'n1', 'disk.log');
    expect(disk).toMatch(/torn-write log\.jsonl: kept \d+ of the last unsynced write's \d+ bytes/);
    expect(nodeLog(summary.runDir, 'n1', 'stdout.log')).toMatch(/ n1 log-torn-tail bytes=\d+/);
    const ops = nemesisOps(summary.runDir);
    expect(ops.some((op) => op.f === 'induced-exit')).toBe(true);
    expect(killedN1(ops)).toBe(true);
  });
});
