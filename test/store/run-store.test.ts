import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Drain } from '../../src/observe/drain.js';
import { readStoredRun, readStoredSeed } from '../../src/store/run-reader.js';
import { latestRun, markIncomplete, RunStore } from '../../src/store/run-store.js';

describe('RunStore', () => {
  let storeDir: string;
  beforeEach(() => {
    storeDir = mkdtempSync(join(tmpdir(), 'mallory-store-'));
  });
  afterEach(() => {
    rmSync(storeDir, { recursive: true, force: true });
  });

  const info = { id: 'r1', system: 'kvraft', seed: 7, policy: 'random', config: { a: 1 } };

  it('lays out store/<system>/<timestamp>/ and points latest at it', () => {
    const store = RunStore.create(storeDir, info);
    expect(store.dir.startsWith(join(storeDir, 'kvraft'))).toBe(true);
    expect(existsSync(join(store.dir, 'run.db'))).toBe(true);
    expect(existsSync(join(store.dir, 'nodes'))).toBe(true);
    expect(realpathSync(latestRun(storeDir)!)).toBe(realpathSync(store.dir));
    store.close();
  });

  it('keeps what was written when the writer never closes (a killed run), and cleanup marks it incomplete', () => {
    const store = RunStore.create(storeDir, info);
    store.appendOp({ index: 0, time: 1, type: 'invoke', process: 0, f: 'read', value: ['k', null] });
    store.scheduleStarted(0, 10);
    store.fault({ schedule: 0, step: 1, atMs: 2500, f: 'kill', value: 'leader', nodes: ['n1'], outcome: 'ok' });
    store.bug({
      schedule: 0,
      kind: 'crash',
      name: 'unexpected-exit',
      message: 'n1 exited',
      evidence: {},
      faultSchedule: [{ atMs: 2500, f: 'kill', value: 'leader' }],
      seed: 7,
      foundAtMs: 3000,
    });
    // read it from another connection while the writer still holds it open
    const db = new Database(join(store.dir, 'run.db'), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM faults').get()).toEqual({ n: 1 });
    expect(db.prepare('SELECT status FROM run').get()).toEqual({ status: 'running' });
    db.close();
    expect(readFileSync(join(store.dir, 'history.jsonl'), 'utf8')).toContain('"f":"read"');
    expect(markIncomplete(store.dir)).toBe(true);
    const after = new Database(join(store.dir, 'run.db'), { readonly: true });
    expect(after.prepare('SELECT status FROM run').get()).toEqual({ status: 'incomplete' });
    after.close();
    store.close();
  });

  it('keeps the mined log templates, so a run seeded from it names the same lines with the same ids', () => {
    const mined = new Drain();
    const lines = ['raft: became leader at term 3', 'wal: saved snapshot at index 1200', 'raft: became leader at term 4'];
    const ids = lines.map((l) => mined.add(l).id);
    const store = RunStore.create(storeDir, info);
    store.saveLogTemplates(mined.templates());
    store.saveLogTemplates(mined.templates()); // saved every schedule: rewriting keeps one row each
    store.close();

    const seed = readStoredSeed(store.dir, 'random');
    expect(seed.templates.map((t) => t.id)).toEqual(['L1', 'L2']);
    expect(readStoredRun(store.dir).templates).toEqual({
      L1: mined.template('L1'),
      L2: mined.template('L2'),
    });
    // A later run meets the lines in another order, and a line of its own first: the seed's lines
    // keep the seed's ids, the new one gets the next.
    const seeded = new Drain();
    seeded.load(seed.templates);
    expect(seeded.add('etcdserver: published local member to cluster').id).toBe('L3');
    expect(seeded.add(lines[1]).id).toBe(ids[1]);
    expect(seeded.add(lines[0]).id).toBe(ids[0]);
  });

  it('keeps the sequence a schedule replayed, and opens a run stored before that column existed', () => {
    const store = RunStore.create(storeDir, info);
    const dir = store.dir;
    store.scheduleStarted(0, 0);
    store.scheduleStarted(1, 31_000);
    const followed = { mutation: 'cut', steps: [{ fault: { f: 'kill', value: 'leader' }, armed: 'free' }] };
    store.scheduleFollowed(1, followed);
    store.close();
    const db = new Database(join(dir, 'run.db'));
    const rows = db.prepare('SELECT idx, followed FROM schedules ORDER BY idx').all() as {
      idx: number;
      followed: string | null;
    }[];
    expect(rows.map((r) => (r.followed === null ? null : JSON.parse(r.followed) as unknown))).toEqual([null, followed]);
    // An older run: no `followed` column; opening it adds one and loses nothing.
    db.exec('ALTER TABLE schedules DROP COLUMN followed');
    db.close();
    const reopened = RunStore.open(dir);
    reopened.scheduleFollowed(0, followed);
    reopened.close();
    const again = new Database(join(dir, 'run.db'), { readonly: true });
    expect(again.prepare('SELECT count(*) AS n FROM schedules WHERE followed IS NOT NULL').get()).toEqual({ n: 1 });
    expect(again.prepare('SELECT count(*) AS n FROM schedules').get()).toEqual({ n: 2 });
    again.close();
  });

  it("keeps a fault's links (its grudge), and reads a run stored before them with none", () => {
    const store = RunStore.create(storeDir, info);
    const dir = store.dir;
    store.scheduleStarted(0, 0);
    const links: [string, string][] = [
      ['n1', 'n2'],
      ['n2', 'n1'],
    ];
    store.fault({ schedule: 0, step: 0, atMs: 10, f: 'start-partition', value: 'halves', nodes: ['n1', 'n2'], outcome: 'ok', links });
    store.fault({ schedule: 0, step: 1, atMs: 20, f: 'kill', value: 'one', nodes: ['n3'], outcome: 'ok' });
    store.close();
    expect(readStoredRun(dir).faults.map((f) => f.links)).toEqual([links, null]);
    // An older run: no `links` column; it still reads, with no links.
    const db = new Database(join(dir, 'run.db'));
    db.exec('ALTER TABLE faults DROP COLUMN links');
    db.close();
    expect(readStoredRun(dir).faults.map((f) => [f.f, f.links])).toEqual([
      ['start-partition', null],
      ['kill', null],
    ]);
  });

  it("keeps each schedule's verdicts, and reads a run stored before them from its check lists", () => {
    const store = RunStore.create(storeDir, info);
    const dir = store.dir;
    const verdicts = [
      { checker: 'crash', valid: true, findings: [], ops: null, ms: null },
      {
        checker: 'linearizable',
        valid: 'unknown',
        reason: 'could not be decided within the 30 s time limit',
        findings: ['linearizability/unknown'],
        ops: 120,
        ms: 30_004,
      },
    ];
    store.scheduleStarted(0, 0);
    store.scheduleEnded(0, 30_000, 120, { findings: 0, checks: {}, valid: 'unknown', verdicts }, 40);
    // As a run stored before verdicts: only what each checker found.
    store.scheduleStarted(1, 31_000);
    store.scheduleEnded(1, 60_000, 99, { findings: 1, checks: { linearizable: ['linearizability/not-linearizable'], set: [] } }, 40);
    store.scheduleStarted(2, 61_000); // still running: no verdicts yet
    store.close();
    const [s0, s1, s2] = readStoredRun(dir).schedules;
    expect(s0.verdicts).toEqual(verdicts);
    expect(s1.verdicts).toEqual([
      { checker: 'linearizable', valid: false, findings: ['linearizability/not-linearizable'], ops: null, ms: null },
      { checker: 'set', valid: true, findings: [], ops: null, ms: null },
    ]);
    expect(s2.verdicts).toBeNull();
  });

  it('refuses a directory that is not a run', () => {
    expect(() => RunStore.open(storeDir)).toThrow(/not a run directory/);
  });
});

describe('RunStore.create, beside another campaign starting at once', () => {
  let storeDir: string;
  beforeEach(() => {
    storeDir = mkdtempSync(join(tmpdir(), 'mallory-store-race-'));
  });
  afterEach(() => {
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('never takes a directory another campaign made after it chose the name (a fleet’s workers)', () => {
    const info = { id: 'r1', system: 'kvraft', seed: 7, policy: 'random', config: {} };
    const named: string[] = [];
    // The other campaign makes the directory between this one choosing its name and making it.
    const store = RunStore.create(storeDir, info, (dir) => {
      named.push(dir);
      if (named.length === 1) mkdirSync(dir);
    });

    expect(named).toHaveLength(2);
    expect(store.dir).toBe(`${named[0]}-1`);
    expect(readdirSync(named[0])).toEqual([]);
    expect(existsSync(join(store.dir, 'run.db'))).toBe(true);
    store.close();
  });
});
