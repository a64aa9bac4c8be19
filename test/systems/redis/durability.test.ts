import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, mallory, sandbox, skipReason, type Sandbox, jsonOf } from '../../e2e/helpers.js';

// One durable Redis node under the FUSE disk layer, losing power five times while clients write
// (test/systems/redis/schedules/lose-unfsynced.jsonl). Under appendfsync everysec the last second
// of acknowledged writes was never fsynced: checked against "survives a crash" (--durability
// disk-loss), the run reports the lost writes as a broken contract naming the faults; a replay of
// the bug runs with the same setting and contract. Under appendfsync always it runs clean; under
// what Redis declares for everysec (process-crash), the loss is a note, not a bug.

const reason = skipReason(['redis-server', 'redis-sentinel', 'gcc', 'fusermount3']);
const SCHEDULE = join(import.meta.dirname, 'schedules', 'lose-unfsynced.jsonl');
const STEPS = 8;
const LOSSES = 5;
/** Each loss of power, and the restart after it. */
const FAULTS = 2 * LOSSES;
const RUN_TIMEOUT_MS = 150_000;

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly faults: number;
  readonly bugs: readonly { kind: string; name: string; message: string; dir: string }[];
  readonly ops: { ok: number; fail: number; info: number };
}

interface HistoryLine {
  readonly process: number | string;
  readonly f: string;
  readonly error?: string;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

async function run(box: Sandbox, ...extra: string[]): Promise<{ code: number | null; summary: Summary }> {
  const r = await mallory(
    [
      ...['run', '--system', 'redis', '--nodes', '1', '--seed', '3', '--time', '5m'],
      ...['--steps', `${STEPS}`, '--schedule', SCHEDULE, '--store', box.store, '--json', ...extra],
    ],
    box,
    RUN_TIMEOUT_MS,
  );
  if (r.stdout === '') throw new Error(`mallory run printed no summary (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, summary: jsonOf(r) as Summary };
}

function history(runDir: string): HistoryLine[] {
  return readFileSync(join(runDir, 'history.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as HistoryLine);
}

function runConfig(runDir: string): Record<string, unknown> {
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT config FROM run').get() as { config: string };
    return JSON.parse(row.config) as Record<string, unknown>;
  } finally {
    db.close();
  }
}

describe.skipIf(reason !== undefined)(
  `redis, one durable node, losing unfsynced writes (mallory run --schedule)${reason ? `: skipped, ${reason}` : ''}`,
  () => {
    it('appendfsync everysec, checked as surviving a crash: lost acknowledged writes break the contract', async () => {
      const box = sandbox();
      boxes.push(box);
      const { code, summary } = await run(box, '--durability', 'disk-loss');
      expect(summary.status).toBe('complete');
      // Five losses of power and five restarts.
      expect(summary.faults).toBe(FAULTS);
      const ops = history(summary.runDir);
      // Each fault is two nemesis lines: what was asked, and the nodes it hit.
      expect(ops.filter((op) => op.f === 'lose-unfsynced' && op.process === 'nemesis').length).toBe(
        2 * LOSSES,
      );
      const bug = summary.bugs.find((b) => b.kind === 'durability');
      expect(bug, JSON.stringify(summary.bugs)).toMatchObject({ name: 'broken-contract' });
      expect(code).toBe(1);
      expect(bug!.message).toMatch(
        /^acknowledged writes lost although the run checks that they survive disk-loss \(--durability; redis declares process-crash\) \(disks lost unfsynced writes: lose-unfsynced n1 at \d+\.\d s(; lose-unfsynced n1 at \d+\.\d s){4}\): key .*: (lost acknowledged write|stale read|resurrected value): /,
      );
      const evidence = JSON.parse(readFileSync(join(bug!.dir, 'evidence.json'), 'utf8')) as {
        explanations: { anomaly: string; message: string }[];
        contract: { durability: string; statedBy: string; withinContract: boolean };
      };
      expect(evidence.contract).toMatchObject({
        durability: 'disk-loss',
        statedBy: 'user',
        withinContract: true,
      });
      // The writes the disks lost, named: each key's anomaly is lost data (a write acknowledged and
      // never read again, a value brought back, an older value read), with the ops that show it.
      expect(evidence.explanations.length).toBeGreaterThan(0);
      for (const e of evidence.explanations) {
        expect(['lost-write', 'resurrected', 'stale-read']).toContain(e.anomaly);
        expect(e.message).toMatch(/by process \d+/);
      }
      // The run and the bug keep the setting (its default) and the contract checked.
      expect(runConfig(summary.runDir)).toMatchObject({
        settings: { appendfsync: 'everysec' },
        durability: 'disk-loss',
      });
      const [header] = readFileSync(join(bug!.dir, 'schedule.jsonl'), 'utf8').split('\n');
      expect(JSON.parse(header)).toMatchObject({
        mallory: {
          system: 'redis',
          nodes: 1,
          settings: { appendfsync: 'everysec' },
          durability: 'disk-loss',
        },
      });
      // The replay runs the same setting against the same contract, from the bug directory alone.
      const replay = await mallory(['replay', bug!.dir, '--store', box.store], box, RUN_TIMEOUT_MS);
      expect(replay.stderr).toContain('--set appendfsync=everysec, --durability disk-loss');
      expect(replay.stdout).toBe('reproduced 1/1 (durability/broken-contract)\n');
      expect(replay.code).toBe(1);
      // Each restart loaded the AOF (appendonlydir/, under the layer) that the loss left.
      expect(readFileSync(join(summary.runDir, 'nodes', 'n1', 'stdout.log'), 'utf8')).toMatch(
        /Reading RDB base file on AOF loading|DB loaded from (append only|incr) file/,
      );
    });

    it('appendfsync always: the same losses of power lose no acknowledged write', async () => {
      const box = sandbox();
      boxes.push(box);
      const { code, summary } = await run(box, '--durability', 'disk-loss', '--set', 'appendfsync=always');
      expect(summary.status).toBe('complete');
      expect(summary.faults).toBe(FAULTS);
      expect(summary.bugs).toEqual([]);
      expect(code).toBe(0);
      expect(summary.ops.ok).toBeGreaterThan(300);
      expect(runConfig(summary.runDir)).toMatchObject({ settings: { appendfsync: 'always' } });
    });

    it('everysec as redis declares it (process-crash): the lost writes are a note, not a bug', async () => {
      const box = sandbox();
      boxes.push(box);
      const { code, summary } = await run(box);
      expect(summary.status).toBe('complete');
      expect(summary.bugs).toEqual([]);
      expect(code).toBe(0);
      expect(runConfig(summary.runDir)).toMatchObject({ durability: 'process-crash' });
      const notes = history(summary.runDir).filter((op) => op.f === 'durability/beyond-contract');
      expect(notes.length).toBe(1);
      expect(notes[0].error).toContain('writes lost beyond what redis declares they survive (process-crash)');
    });
  },
);
