import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, mallory, sandbox, skipReason, type Sandbox, jsonOf } from '../../e2e/helpers.js';

// etcd is the negative control for the transactional workloads too: a short campaign under the
// default policy's faults finds nothing, and its transactions did read what others wrote.

const reason = skipReason(['etcd']);
const STEPS = 4;
const MIN_OK_TXNS = 200;
const CAMPAIGN_TIMEOUT_MS = 180_000;

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly schedules: number;
  readonly faults: number;
  readonly bugs: readonly unknown[];
  readonly ops: { ok: number; fail: number; info: number };
}

interface HistoryLine {
  readonly type: string;
  readonly f: string;
  readonly value: readonly (readonly [string, string, unknown])[];
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

describe.skipIf(reason !== undefined)(
  `etcd transactional campaigns (mallory run)${reason ? `: skipped, ${reason}` : ''}`,
  () => {
    for (const [workload, seed] of [
      ['list-append', 5],
      ['rw-register', 6],
    ] as const) {
      it(`${workload}: a short campaign reports no bug`, async () => {
        const box = sandbox();
        boxes.push(box);
        const r = await mallory(
          [
            ...['run', '--system', 'etcd', '--workload', workload, '--seed', `${seed}`],
            ...['--time', '25s', '--steps', `${STEPS}`, '--store', box.store, '--json'],
          ],
          box,
          CAMPAIGN_TIMEOUT_MS,
        );
        const summary = jsonOf(r) as Summary;
        console.log(
          `etcd ${workload}: ${summary.schedules} schedules, ${summary.faults} faults, txns ok ${summary.ops.ok} fail ${summary.ops.fail} info ${summary.ops.info}`,
        );
        expect(summary.status).toBe('complete');
        expect(summary.bugs).toEqual([]);
        expect(r.code).toBe(0);
        expect(summary.schedules).toBeGreaterThanOrEqual(1);
        const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as HistoryLine);
        const txns = history.filter((op) => op.type === 'ok' && op.f === 'txn');
        expect(txns.length).toBeGreaterThan(MIN_OK_TXNS);
        // Reads saw what other transactions wrote: lists or registers, not only empty keys.
        const seen = txns.flatMap((op) => op.value.filter(([f, , v]) => f === 'r' && v !== null));
        expect(seen.length).toBeGreaterThan(MIN_OK_TXNS / 2);
      });
    }
  },
);
