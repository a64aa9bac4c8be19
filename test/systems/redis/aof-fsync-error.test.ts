import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, jsonOf, mallory, sandbox, skipReason, type Sandbox } from '../../e2e/helpers.js';

// Three Redis nodes with Sentinel whose disks all answer EIO to fsync for 4 s while clients write
// (schedules/fsync-error-all.jsonl). The primary's failed background AOF fsync leaves it refusing
// writes and PING with -MISCONF after the heal, so its replicas never sync again: the
// `no-recovery` that follows is the exception Redis's adapter declares (redis/redis#8419), said as
// expected in the history, and no bug. Replicas that panic on the failed fsync are induced exits.

const reason = skipReason(['redis-server', 'redis-sentinel', 'gcc', 'fusermount3']);
const SCHEDULE = join(import.meta.dirname, 'schedules', 'fsync-error-all.jsonl');
const RUN_TIMEOUT_MS = 150_000;

interface HistoryLine {
  readonly process: number | string;
  readonly f: string;
  readonly error?: string;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

describe.skipIf(reason !== undefined)(
  `redis + sentinel after every disk failed to fsync (mallory run --schedule)${reason ? `: skipped, ${reason}` : ''}`,
  () => {
    it('the primary stuck in -MISCONF is the declared recovery exception: a note, no bug', async () => {
      const box = sandbox();
      boxes.push(box);
      const r = await mallory(
        [
          ...['run', '--system', 'redis', '--seed', '3', '--time', '5m', '--steps', '3'],
          ...['--schedule', SCHEDULE, '--recovery-timeout', '5s', '--store', box.store, '--json'],
        ],
        box,
        RUN_TIMEOUT_MS,
      );
      if (r.stdout === '') throw new Error(`mallory run printed no summary (exit ${r.code}): ${r.stderr}`);
      const summary = jsonOf(r) as {
        runDir: string;
        status: string;
        bugs: readonly { kind: string; name: string }[];
      };
      const ops = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as HistoryLine);
      const expected = ops.filter((op) => op.process === 'nemesis' && op.f === 'recovery/no-recovery');
      expect(expected, r.stderr).toHaveLength(1);
      expect(expected[0].error).toMatch(
        /^expected, a declared exception to the recovery contract: Redis ≥ 7\.0 refuses writes and PING with -MISCONF .*\(redis\/redis#8419\); n\d, a primary \(ROLE master\), answers PING with -MISCONF Errors writing to the AOF file: Input\/output error \(after fsync-error n1,n2,n3 at 1\.0 s\): the system did not serve again/,
      );
      expect(summary.bugs).toEqual([]);
      expect(r.code).toBe(0);
    });
  },
);
