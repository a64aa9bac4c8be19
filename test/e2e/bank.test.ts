import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import {
  explainExit,
  disposeSandbox,
  mallory,
  type Sandbox,
  sandbox,
  skipReason,
  jsonOf,
} from './helpers.js';

interface Summary {
  readonly status: string;
  readonly runDir: string;
  readonly bugs: readonly { readonly kind: string; readonly name: string; readonly message: string }[];
}

const scheduleDir = mkdtempSync(join(tmpdir(), 'mallory-e2e-bank-'));

/** A fixed schedule file of `lines`. */
function schedule(name: string, lines: readonly object[]): string {
  const file = join(scheduleDir, `${name}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

/** Cut the leader off, heal, then kill the (new) leader and start it again: two elections. */
const PARTITION_THEN_KILL = [
  { atMs: 1000, f: 'start-partition', value: 'leader' },
  { atMs: 4000, f: 'stop-partition', value: null },
  { atMs: 5500, f: 'kill', value: 'leader' },
  { atMs: 8000, f: 'start', value: 'all' },
];
const STEPS = '5';
const ACCOUNTS = ['0', '1', '2', '3', '4'];
const TOTAL = 100;

function history(runDir: string): Op[] {
  return readFileSync(join(runDir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Op);
}

describe('the bank workload against real systems (fixed schedules)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });
  afterAll(() => {
    rmSync(scheduleDir, { recursive: true, force: true });
  });

  it.skipIf(skipReason(['etcd']) !== undefined)(
    `etcd bank under a partition and a kill: transfers and reads in Jepsen’s shape, every read conserves the total${skipReason(['etcd']) ? ` (skipped: ${skipReason(['etcd'])})` : ''}`,
    async () => {
      const b = sandbox();
      boxes.push(b);
      const r = await mallory(
        [
          'run',
          '--system',
          'etcd',
          '--workload',
          'bank',
          '--schedule',
          schedule('partition-then-kill', PARTITION_THEN_KILL),
          '--steps',
          STEPS,
          '--seed',
          '5',
          '--store',
          b.store,
          '--json',
        ],
        b,
      );
      expect(r.stdout, r.stderr).not.toBe('');
      const summary = jsonOf(r) as Summary;
      expect(summary.status).toBe('complete');
      expect(summary.bugs).toEqual([]);
      expect(r.code, explainExit(r)).toBe(0);
      const ops = history(summary.runDir);
      const client = ops.filter((op) => op.process !== 'nemesis');
      expect(new Set(client.map((op) => op.f))).toEqual(new Set(['transfer', 'read']));
      // Jepsen's shapes: a transfer {from, to, amount}, a read completed with every balance.
      for (const op of client.filter((o) => o.f === 'transfer')) {
        const { from, to, amount } = op.value as { from: number; to: number; amount: number };
        expect(from).not.toBe(to);
        expect([from, to].every((a) => Number.isInteger(a) && a >= 0 && a < ACCOUNTS.length)).toBe(true);
        expect(amount >= 1 && amount <= 5).toBe(true);
      }
      const okReads = client.filter((op) => op.f === 'read' && op.type === 'ok');
      for (const op of okReads) {
        const balances = op.value as Record<string, number>;
        expect(Object.keys(balances)).toEqual(ACCOUNTS);
        expect(Object.values(balances).reduce((a, v) => a + v, 0)).toBe(TOTAL);
        expect(Object.values(balances).every((v) => v >= 0)).toBe(true);
      }
      // Money moved, and the bank served again after the faults: an acknowledged transfer and read
      // after the killed node was started again.
      const restarted = ops.findIndex((op) => op.process === 'nemesis' && op.f === 'start');
      expect(restarted).toBeGreaterThan(0);
      const after = ops.slice(restarted);
      expect(after.some((op) => op.f === 'transfer' && op.type === 'ok')).toBe(true);
      expect(after.some((op) => op.f === 'read' && op.type === 'ok')).toBe(true);
      expect(okReads.some((op) => Object.values(op.value as object).some((v) => v !== TOTAL / 5))).toBe(true);
      expect(client.some((op) => op.f === 'transfer' && op.type === 'fail')).toBe(true);
      const count = (f: string, type: string): number =>
        client.filter((op) => op.f === f && op.type === type).length;
      console.log(
        `etcd bank: transfers ${count('transfer', 'ok')} ok, ${count('transfer', 'fail')} fail, ${count('transfer', 'info')} info; reads ${okReads.length} ok`,
      );
    },
  );

  it('a system whose transactions cannot be guarded is refused at start, in one line', async () => {
    const b = sandbox();
    boxes.push(b);
    const r = await mallory(
      ['run', '--system', 'examples/tiny-kv/system.ts', '--workload', 'bank', '--store', b.store],
      b,
      60_000,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mallory: system tiny-kv keeps no bank (a bank client, or transactions that can be guarded): use --workload register',
    );
  });
});
