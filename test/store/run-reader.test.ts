import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { notARunReason } from '../../src/store/run-reader.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-run-reader-'));
  dirs.push(dir);
  return dir;
}

describe('notARunReason', () => {
  it('names a directory that is missing or has no run.db', () => {
    const dir = runDir();
    expect(notARunReason(join(dir, 'nope'))).toBe(`${join(dir, 'nope')} does not exist`);
    expect(notARunReason(dir)).toBe(`${dir} is not a run directory (no run.db)`);
  });

  it('names a run.db that is empty, not a database, or has no run, in one line', () => {
    const empty = runDir();
    writeFileSync(join(empty, 'run.db'), '');
    const garbage = runDir();
    writeFileSync(join(garbage, 'run.db'), 'not a database at all, but long enough to be looked at\n'.repeat(20));
    const noRunTable = runDir();
    new Database(join(noRunTable, 'run.db')).exec('CREATE TABLE other (a)');
    const noRunRow = runDir();
    new Database(join(noRunRow, 'run.db')).exec('CREATE TABLE run (id TEXT)');
    const aDirectory = runDir();
    mkdirSync(join(aDirectory, 'run.db'));

    const reasons = [empty, garbage, noRunTable, noRunRow, aDirectory].map(notARunReason);

    expect(reasons[0]).toMatch(/run\.db cannot be read as a run's database \(no such table: run\)/);
    expect(reasons[1]).toMatch(/run\.db cannot be read as a run's database \(file is not a database\)/);
    expect(reasons[2]).toMatch(/run\.db cannot be read as a run's database \(no such table: run\)/);
    expect(reasons[3]).toBe(`${join(noRunRow, 'run.db')} records no run (it is empty)`);
    expect(reasons[4]).toMatch(/run\.db cannot be read as a run's database/);
    for (const reason of reasons) expect(reason).not.toContain('\n');
  });

  it('is undefined for a run.db that records its run', () => {
    const dir = runDir();
    const db = new Database(join(dir, 'run.db'));
    db.exec("CREATE TABLE run (id TEXT); INSERT INTO run VALUES ('r')");
    db.close();
    expect(notARunReason(dir)).toBeUndefined();
  });
});
