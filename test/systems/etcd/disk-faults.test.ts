import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, jsonOf, mallory, sandbox, skipReason, type Sandbox } from '../../e2e/helpers.js';

// The negative control under disk faults: etcd, three minutes of the adaptive policy's disk faults
// (seed 3, which drew 16 false crash findings in 90 s before fail-stops were told from crashes).
// etcd stops on a failed fsync or a full disk (its `"level":"fatal"` line, then exit 1): the right
// response, so each such exit is an induced exit with its fatal line as evidence, not a crash; a
// torn write keeps whole 512-byte sectors, the contract etcd's WAL assumes. No finding at all.

const reason = skipReason(['etcd', 'gcc', 'fusermount3']);
const RUN_TIMEOUT_MS = 290_000;
const MIN_OK_OPS = 500;

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly schedules: number;
  readonly faults: number;
  readonly bugs: readonly { kind: string; name: string; message: string }[];
  readonly ops: { ok: number };
  readonly metrics: Readonly<Record<string, number>>;
}

interface HistoryLine {
  readonly process: number | string;
  readonly f: string;
  readonly value: unknown;
  readonly error?: string;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

describe.skipIf(reason !== undefined)(
  `etcd under disk faults, the negative control (mallory run --faults disk)${reason ? `: skipped, ${reason}` : ''}`,
  () => {
    it(
      'three minutes: fail-stops are induced exits with their fatal lines, torn writes keep sectors, no finding',
      async () => {
        const box = sandbox();
        boxes.push(box);
        const r = await mallory(
          [
            ...['run', '--system', 'etcd', '--seed', '3', '--time', '3m', '--faults', 'disk'],
            ...['--store', box.store, '--json'],
          ],
          box,
          RUN_TIMEOUT_MS,
        );
        if (r.stdout === '') throw new Error(`mallory run printed no summary (exit ${r.code}): ${r.stderr}`);
        const summary = jsonOf(r) as Summary;
        console.log(
          `etcd --faults disk: ${summary.schedules} schedules, ${summary.faults} faults, ops ok ${summary.ops.ok}, induced exits ${summary.metrics.induced_exits}`,
        );
        expect(summary.bugs.map((b) => `${b.kind}/${b.name}: ${b.message}`)).toEqual([]);
        expect(summary.status).toBe('complete');
        expect(r.code).toBe(0);
        expect(summary.ops.ok).toBeGreaterThan(MIN_OK_OPS);

        // etcd did stop on its failing disk, and said why: the fatal line is the exit's evidence.
        const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as HistoryLine);
        const induced = history.filter((op) => op.process === 'nemesis' && op.f === 'induced-exit');
        expect(induced.length).toBeGreaterThan(0);
        expect(summary.metrics.induced_exits).toBe(induced.length);
        expect(
          induced.filter((op) =>
            /it said: \{"level":"fatal".*(?:no space left on device|input\/output error)/.test(
              op.error ?? '',
            ),
          ).length,
        ).toBeGreaterThan(0);

        // Every torn write kept whole sectors, and the run recorded so.
        const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
        try {
          const torn = db
            .prepare("SELECT value FROM faults WHERE f = 'torn-write' AND outcome = 'ok'")
            .all() as { value: string }[];
          for (const row of torn) expect(JSON.parse(row.value)).toMatchObject({ granularity: 'sector' });
        } finally {
          db.close();
        }
        for (const node of ['n1', 'n2', 'n3']) {
          const disk = readFileSync(join(summary.runDir, 'nodes', node, 'disk.log'), 'utf8');
          expect(disk).not.toMatch(/torn inside a sector/);
        }
      },
      RUN_TIMEOUT_MS + 10_000,
    );
  },
);
