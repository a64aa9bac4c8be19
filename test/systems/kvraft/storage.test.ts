import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { parseNodeArgs } from '../../../src/systems/kvraft/_internals/args.js';
import type { Entry } from '../../../src/systems/kvraft/_internals/messages.js';
import { nodeDiskFs, nodeEnv } from '../../../src/systems/kvraft/_internals/node-seams.js';
import { Storage } from '../../../src/systems/kvraft/_internals/storage.js';

const REAL_IO = { fs: nodeDiskFs, timers: nodeEnv };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'kvraft-storage-'));
  dirs.push(d);
  return d;
}

const put = (index: number, term: number): Entry => ({
  index,
  term,
  command: { type: 'put', key: `k${index}`, value: index },
});

describe('kvraft storage', () => {
  it('reads back meta, snapshot and the entries after the snapshot, ignoring a torn last line', () => {
    const dir = tempDir();
    const s = new Storage(REAL_IO, dir);
    s.saveMeta({ term: 3, votedFor: 'n2' });
    s.append([put(1, 1), put(2, 1), put(3, 2)]);
    s.saveSnapshot({ lastIndex: 1, lastTerm: 1, members: ['n1'], configIndex: 0, kv: [['k1', 1]] });
    s.close();
    appendFileSync(path.join(dir, 'log.jsonl'), '{"index":4,"te');
    const loaded = new Storage(REAL_IO, dir).load();
    expect(loaded.meta).toEqual({ term: 3, votedFor: 'n2' });
    expect(loaded.snapshot?.lastIndex).toBe(1);
    expect(loaded.entries.map((e) => e.index)).toEqual([2, 3]);
  });

  it('cuts a torn record off the log at start, so what it appends next survives the next start', () => {
    const dir = tempDir();
    const s = new Storage(REAL_IO, dir);
    s.append([put(1, 1), put(2, 1)]);
    s.close();
    const whole = readFileSync(path.join(dir, 'log.jsonl')).length;
    // A crash tore the append of entry 3: a prefix of it, without its newline, is on disk.
    appendFileSync(path.join(dir, 'log.jsonl'), JSON.stringify(put(3, 1)).slice(0, 11));
    const restarted = new Storage(REAL_IO, dir);
    const loaded = restarted.load();
    expect(loaded.entries.map((e) => e.index)).toEqual([1, 2]);
    expect(loaded.cutBytes).toBe(11);
    expect(readFileSync(path.join(dir, 'log.jsonl')).length).toBe(whole);
    restarted.append([put(3, 2), put(4, 2)]);
    restarted.close();
    const again = new Storage(REAL_IO, dir).load();
    expect(again.entries.map((e) => [e.index, e.term])).toEqual([
      [1, 1],
      [2, 1],
      [3, 2],
      [4, 2],
    ]);
    expect(again.cutBytes).toBe(0);
  });

  it('a whole record without its newline is torn too (its write did not finish)', () => {
    const dir = tempDir();
    const s = new Storage(REAL_IO, dir);
    s.append([put(1, 1)]);
    s.close();
    appendFileSync(path.join(dir, 'log.jsonl'), JSON.stringify(put(2, 1)));
    const loaded = new Storage(REAL_IO, dir).load();
    expect(loaded.entries.map((e) => e.index)).toEqual([1]);
    expect(loaded.cutBytes).toBe(JSON.stringify(put(2, 1)).length);
  });

  it('a disk that refuses an operation goes to onFailure, naming it, instead of throwing', () => {
    const dir = tempDir();
    const failures: string[] = [];
    const s = new Storage(REAL_IO, dir, {
      onFailure: (what, error) => {
        failures.push(`${what}: ${(error as NodeJS.ErrnoException).code ?? '?'}`);
        throw new Error('stopped');
      },
    });
    s.close();
    expect(() => {
      s.append([put(1, 1)]);
    }).toThrow('stopped');
    expect(failures).toEqual(['append to log.jsonl: EBADF']);
  });

  it('rewrites the log on truncation and keeps appending after it', () => {
    const dir = tempDir();
    const s = new Storage(REAL_IO, dir);
    s.append([put(1, 1), put(2, 1), put(3, 1)]);
    s.rewriteLog([put(1, 1)]);
    s.append([put(2, 2)]);
    s.close();
    const lines = readFileSync(path.join(dir, 'log.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as Entry).term)).toEqual([1, 2]);
    expect(new Storage(REAL_IO, dir).load().entries.map((e) => [e.index, e.term])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });
});

describe('kvraft node arguments', () => {
  const base = ['--id', 'n1', '--data', '/d', '--client', '127.0.0.1:1', '--peer', '127.0.0.1:2'];

  it('reads every option', () => {
    const a = parseNodeArgs([
      ...base,
      '--peers',
      'n1=127.0.0.1:2,n2=127.0.0.1:9',
      '--members',
      'n1,n2',
      '--join',
      '--bug',
      'lazy-vote',
      '--bug',
      'stale-read',
      '--snapshot-every',
      '8',
      '--election-ms',
      '100-200',
    ]);
    expect(a.peers.get('n2')).toEqual({ host: '127.0.0.1', port: 9 });
    expect(a.members).toEqual(['n1', 'n2']);
    expect(a.join).toBe(true);
    expect([...a.bugs]).toEqual(['lazy-vote', 'stale-read']);
    expect([a.snapshotEvery, a.electionMinMs, a.electionMaxMs]).toEqual([8, 100, 200]);
  });

  it('names the bad option and what to write', () => {
    expect(() => parseNodeArgs(base)).toThrow('missing --peers');
    expect(() => parseNodeArgs([...base, '--peers', 'n1=x'])).toThrow(/must be HOST:PORT/);
    expect(() => parseNodeArgs([...base, '--peers', 'n1=h:1', '--bug', 'nope'])).toThrow(
      /unknown bug "nope": known bugs are ack-before-commit/,
    );
    expect(() => parseNodeArgs([...base, '--peers', 'n1=h:1', '--election-ms', '5'])).toThrow(/MIN-MAX/);
  });
});
