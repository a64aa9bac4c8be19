import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, mallory, sandbox, skipReason, type Sandbox, jsonOf } from '../../e2e/helpers.js';

// etcd under the FUSE disk layer (its WAL, snapshots and bbolt database, which it mmaps), a
// minority losing power three times while clients write
// (test/systems/etcd/schedules/lose-unfsynced-minority.jsonl): a follower fsyncs its WAL before it
// acknowledges an entry, so no acknowledged write is lost and the run is clean, checked against
// what etcd declares (minority-disk-loss).

const reason = skipReason(['etcd', 'gcc', 'fusermount3']);
const SCHEDULE = join(import.meta.dirname, 'schedules', 'lose-unfsynced-minority.jsonl');
const STEPS = 7;
const RUN_TIMEOUT_MS = 150_000;
const NODES = ['n1', 'n2', 'n3'];

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly faults: number;
  readonly bugs: readonly unknown[];
  readonly ops: { ok: number; fail: number; info: number };
}

interface HistoryLine {
  readonly type: string;
  readonly process: number | string;
  readonly f: string;
  readonly value: unknown;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

describe.skipIf(reason !== undefined)(
  `etcd, a minority losing unfsynced writes (mallory run --schedule)${reason ? `: skipped, ${reason}` : ''}`,
  () => {
    it('loses no acknowledged write', async () => {
      const box = sandbox();
      boxes.push(box);
      const r = await mallory(
        [
          ...['run', '--system', 'etcd', '--seed', '4', '--time', '5m', '--steps', `${STEPS}`],
          ...['--schedule', SCHEDULE, '--store', box.store, '--json'],
        ],
        box,
        RUN_TIMEOUT_MS,
      );
      if (r.stdout === '') throw new Error(`mallory run printed no summary (exit ${r.code}): ${r.stderr}`);
      const summary = jsonOf(r) as Summary;
      expect(summary.status).toBe('complete');
      expect(summary.bugs).toEqual([]);
      expect(r.code).toBe(0);
      // Three losses of power (one node each) and three restarts.
      expect(summary.faults).toBe(6);
      const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as HistoryLine);
      const lost = history.filter(
        (op) => op.process === 'nemesis' && op.f === 'lose-unfsynced' && Array.isArray(op.value),
      );
      expect(lost.map((op) => (op.value as string[]).length)).toEqual([1, 1, 1]);
      const writes = history.filter((op) => op.type === 'ok' && op.f === 'write');
      expect(writes.length).toBeGreaterThan(100);
      // Every node ran on the layer (its output is beside the node logs).
      for (const node of NODES) {
        expect(existsSync(join(summary.runDir, 'nodes', node, 'disk.log'))).toBe(true);
      }
      const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
      try {
        const row = db.prepare('SELECT config FROM run').get() as { config: string };
        expect(JSON.parse(row.config)).toMatchObject({ durability: 'minority-disk-loss', settings: {} });
      } finally {
        db.close();
      }
    });
  },
);
