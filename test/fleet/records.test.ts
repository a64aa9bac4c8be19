import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { type Plan, readPlan } from '../../src/fleet/plan.js';
import {
  CAMPAIGNS_DIR,
  type Claim,
  claimIndex,
  HEARTBEAT_MS,
  type IndexRecord,
  liveClaim,
  readRecord,
  readRecords,
  STALE_CLAIM_MS,
  writeRecord,
} from '../../src/fleet/records.js';
import { tempDir, usageError, writeStorePlan } from './_helpers/plan.js';

interface LockFile {
  host: string;
  pid: number;
  token: string;
  since: string;
  beat: string;
}

const SINCE = '2024-05-01T10:00:00.000Z';

/** The pid of a process that has exited. */
function deadPid(): number {
  const { pid, status } = spawnSync(process.execPath, ['-e', '']);
  expect(status).toBe(0);
  return pid;
}

describe('the records of a plan', () => {
  let store: string;
  let plan: Plan;
  let claims: Claim[];
  beforeEach(() => {
    store = tempDir();
    plan = writeStorePlan(store, { seeds: 2 });
    claims = [];
  });
  afterEach(() => {
    vi.useRealTimers();
    for (const claim of claims) claim.release();
    rmSync(store, { recursive: true, force: true });
  });

  const campaigns = (): string => join(plan.dir, CAMPAIGNS_DIR);
  const lockPath = (index: number): string => join(campaigns(), `${index}.lock`);
  const readLock = (index: number): LockFile => JSON.parse(readFileSync(lockPath(index), 'utf8')) as LockFile;
  const writeLock = (index: number, lock: Partial<LockFile>): void => {
    mkdirSync(campaigns(), { recursive: true });
    const now = new Date().toISOString();
    writeFileSync(
      lockPath(index),
      JSON.stringify({
        host: hostname(),
        pid: process.pid,
        token: 'by-hand',
        since: SINCE,
        beat: now,
        ...lock,
      }),
    );
  };
  const claim = (index: number): Claim => {
    const held = claimIndex(plan, index);
    claims.push(held);
    return held;
  };

  describe('run paths', () => {
    const runIn = (storeDir: string): string => join(storeDir, 'kvraft', '20261207T000000-1');
    const doneRecord = (runDir: string): IndexRecord => ({
      index: 0,
      status: 'done',
      attempt: 2,
      host: 'h1',
      pid: 1,
      startedAt: SINCE,
      runDir,
      result: { seed: 10, runDir, metrics: {}, bugs: [] },
      findings: [
        {
          kind: 'linearizability',
          name: 'stale-read',
          signature: 's',
          message: 'm',
          schedule: 0,
          foundAtMs: 1,
          dir: join(runDir, 'bugs', '1'),
        },
      ],
      replaced: [join(store, 'kvraft', 'earlier')],
    });
    const copyStore = (): string => {
      const copy = tempDir();
      rmSync(copy, { recursive: true });
      cpSync(store, copy, { recursive: true });
      return copy;
    };

    it('are kept relative to the plan, so a copy of the store at another path reads its own runs', () => {
      mkdirSync(join(runIn(store), 'bugs', '1'), { recursive: true });
      writeRecord(plan, doneRecord(runIn(store)));
      const onDisk = readFileSync(join(campaigns(), '0.json'), 'utf8');
      expect(onDisk).not.toContain(store);
      const copy = copyStore();
      try {
        const moved = readPlan(join(copy, 'plans', plan.id, 'plan.json'));

        const record = readRecord(moved, 0)!;

        expect(record.runDir).toBe(runIn(copy));
        expect(record.result?.runDir).toBe(runIn(copy));
        expect(record.findings?.[0].dir).toBe(join(runIn(copy), 'bugs', '1'));
        expect(record.replaced).toEqual([join(copy, 'kvraft', 'earlier')]);
        expect(readRecord(plan, 0)).toEqual(doneRecord(runIn(store)));
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });

    it("reads a record written with absolute paths in a copy as the copy's, though the original exists", () => {
      mkdirSync(join(runIn(store), 'bugs', '1'), { recursive: true });
      mkdirSync(campaigns(), { recursive: true });
      writeFileSync(join(campaigns(), '0.json'), JSON.stringify(doneRecord(runIn(store))));
      expect(readRecord(plan, 0)).toEqual(doneRecord(runIn(store)));
      const copy = copyStore();
      try {
        const moved = readPlan(join(copy, 'plans', plan.id, 'plan.json'));

        const record = readRecords(moved).get(0)!;

        expect(record.runDir).toBe(runIn(copy));
        expect(record.result?.runDir).toBe(runIn(copy));
        expect(record.findings?.[0].dir).toBe(join(runIn(copy), 'bugs', '1'));
        // Gone from both: named where it would be in the copy, not at the original's place.
        expect(record.replaced).toEqual([join(copy, 'kvraft', 'earlier')]);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    });
  });

  describe('claimIndex', () => {
    it('writes a lock naming this host and pid, and release removes it', () => {
      const held = claim(1);

      expect(readLock(1)).toMatchObject({ host: hostname(), pid: process.pid });
      held.release();
      expect(existsSync(lockPath(1))).toBe(false);
    });

    it('refuses an index a live worker holds, naming its pid and host', () => {
      claim(0);

      const error = usageError(() => claimIndex(plan, 0));

      expect(error.code).toBe('index-busy');
      expect(error.message).toContain(
        `campaign 0 of ${plan.file} is being run by pid ${process.pid} on ${hostname()}`,
      );
      expect(error.message).not.toContain('\n');
    });

    it('claims the index again once it is released', () => {
      claim(0).release();

      claim(0);

      expect(readLock(0).pid).toBe(process.pid);
    });

    it('takes over a claim not renewed for longer than the stale limit, on whatever host', () => {
      const old = new Date(Date.now() - STALE_CLAIM_MS - 1000).toISOString();
      writeLock(2, { host: 'another-host', pid: 4242, beat: old });

      const held = claim(2);

      expect(readLock(2)).toMatchObject({ host: hostname(), pid: process.pid });
      expect(readLock(2).token).not.toBe('by-hand');
      expect(held.lost()).toBe(false);
    });

    it('takes over a fresh claim whose pid is gone on this host', () => {
      writeLock(3, { pid: deadPid() });

      claim(3);

      expect(readLock(3).pid).toBe(process.pid);
    });

    it('takes over a claim it cannot read', () => {
      mkdirSync(campaigns(), { recursive: true });
      writeFileSync(lockPath(1), 'not json');

      claim(1);

      expect(readLock(1).pid).toBe(process.pid);
    });

    it('refuses a fresh claim of another host, whose pid it cannot check', () => {
      writeLock(1, { host: 'another-host', pid: 4242 });

      const error = usageError(() => claimIndex(plan, 1));

      expect(error.code).toBe('index-busy');
      expect(error.message).toContain(
        'being run by pid 4242 on another-host (since 2024-05-01T10:00:00.000Z)',
      );
    });

    it('renews its beat every heartbeat', () => {
      vi.useFakeTimers({ now: Date.parse(SINCE) });
      claim(0);
      const first = readLock(0);

      vi.advanceTimersByTime(HEARTBEAT_MS);

      expect(first.beat).toBe(SINCE);
      expect(readLock(0)).toEqual({
        ...first,
        beat: new Date(Date.parse(SINCE) + HEARTBEAT_MS).toISOString(),
      });
    });

    it('knows it lost the index once another worker took it over, and then leaves its lock alone', () => {
      vi.useFakeTimers();
      const held = claim(0);
      writeLock(0, { host: 'another-host', pid: 4242 });

      vi.advanceTimersByTime(HEARTBEAT_MS);
      held.release();

      expect(held.lost()).toBe(true);
      expect(readLock(0)).toMatchObject({ host: 'another-host', pid: 4242, token: 'by-hand' });
    });

    it('tells its holder at the first beat after another worker took it over', () => {
      vi.useFakeTimers();
      const onLost = vi.fn();
      const held = claimIndex(plan, 0, onLost);
      claims.push(held);
      vi.advanceTimersByTime(HEARTBEAT_MS);
      expect(onLost).not.toHaveBeenCalled();

      writeLock(0, { host: 'another-host', pid: 4242 });
      vi.advanceTimersByTime(HEARTBEAT_MS);

      expect(onLost).toHaveBeenCalledTimes(1);
      expect(held.lost()).toBe(true);
    });

    it('leaves no temporary file beside the lock it made', () => {
      claim(0);

      expect(readdirSync(campaigns())).toEqual(['0.lock']);
    });
  });

  describe('liveClaim', () => {
    it("names the live worker's host, pid and start", () => {
      writeLock(0, { host: 'another-host', pid: 4242 });

      expect(liveClaim(plan, 0)).toEqual({ host: 'another-host', pid: 4242, since: SINCE });
    });

    it('names this process while it holds the index', () => {
      claim(1);

      expect(liveClaim(plan, 1)).toMatchObject({ host: hostname(), pid: process.pid });
    });

    it('is undefined with no lock, a stale one, a dead pid on this host, or a beat that is not a time', () => {
      writeLock(1, { beat: new Date(Date.now() - STALE_CLAIM_MS - 1000).toISOString() });
      writeLock(2, { pid: deadPid() });
      writeLock(3, { beat: 'yesterday' });

      expect([0, 1, 2, 3].map((i) => liveClaim(plan, i))).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    });
  });

  describe('writeRecord and readRecord', () => {
    const running: IndexRecord = {
      index: 1,
      status: 'running',
      attempt: 1,
      host: 'h1',
      pid: 100,
      startedAt: SINCE,
    };
    const done = (): IndexRecord => ({
      index: 3,
      status: 'done',
      attempt: 2,
      host: 'h2',
      pid: 200,
      startedAt: SINCE,
      endedAt: '2024-05-01T10:01:00.000Z',
      runDir: join(store, 'kvraft/20240501T100000-000Z'),
      runStatus: 'complete',
      findings: [
        {
          kind: 'linearizability',
          name: 'lost-write',
          signature: 'linearizability/lost-write {key:string}',
          message: 'a write was lost',
          schedule: 4,
          foundAtMs: 1234,
          dir: join(store, 'kvraft/20240501T100000-000Z/bugs/1'),
        },
      ],
      replaced: [join(store, 'kvraft/old')],
    });

    it('read back what was written, by index', () => {
      mkdirSync(campaigns(), { recursive: true });
      writeRecord(plan, running);
      writeRecord(plan, done());

      expect(readRecord(plan, 1)).toEqual(running);
      expect(readRecord(plan, 3)).toEqual(done());
      expect(readRecord(plan, 0)).toBeUndefined();
    });

    it('a record written again replaces the earlier one', () => {
      mkdirSync(campaigns(), { recursive: true });
      writeRecord(plan, running);
      writeRecord(plan, { ...running, status: 'failed', error: 'boom' });

      expect(readRecord(plan, 1)).toEqual({ ...running, status: 'failed', error: 'boom' });
    });

    it('readRecords maps every index that has a record, skipping locks and unreadable files', () => {
      expect(readRecords(plan).size).toBe(0);
      mkdirSync(campaigns(), { recursive: true });
      writeRecord(plan, running);
      writeRecord(plan, done());
      writeLock(0, {});
      writeFileSync(join(campaigns(), '2.json'), '{"index": 2,');

      const records = readRecords(plan);

      expect([...records.keys()].sort()).toEqual([1, 3]);
      expect(records.get(3)).toEqual(done());
    });
  });
});
