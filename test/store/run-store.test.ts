import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

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

  it('refuses a directory that is not a run', () => {
    expect(() => RunStore.open(storeDir)).toThrow(/not a run directory/);
  });
});
