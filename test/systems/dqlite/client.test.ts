import { describe, expect, it } from 'vitest';

import { readReply, writeReply } from '../../../src/systems/dqlite/client.js';

// The texts are what our dqlite app answers (src/systems/dqlite/app-source.ts: `handle`, `inTxn`).
describe('what each reply of our dqlite app means for the history', () => {
  it('a write is ok only on done, fail only when it certainly did not run, info otherwise', () => {
    expect(writeReply(200, 'done\n')).toEqual({ type: 'ok' });
    // BEGIN failed (database/sql may retry BEGIN, which writes nothing), or the write lock was refused.
    expect(writeReply(200, 'Error: not started: driver: bad connection\n').type).toBe('fail');
    expect(writeReply(200, 'Error: database is locked\n').type).toBe('fail');
    // COMMIT's answer lost, or a statement cut short inside the transaction: it may have committed.
    expect(writeReply(200, 'Error: commit: call exec-sql (budget 5s): receive: header: EOF\n').type).toBe(
      'info',
    );
    expect(writeReply(200, 'Error: call exec-sql (budget 5s): receive: header: EOF\n').type).toBe('info');
    expect(writeReply(502, 'Bad Gateway').type).toBe('info');
  });

  it("dqlite-demo's write errors are never a definite fail: database/sql may have run the write twice", () => {
    // A run found a write answered "database is locked" whose value a later read returned: the
    // first Exec committed, the leader was lost, database/sql ran it again and that run was refused.
    expect(writeReply(200, 'Error: database is locked\n', undefined, false).type).toBe('info');
    expect(writeReply(200, 'done\n', undefined, false)).toEqual({ type: 'ok' });
  });

  it('a cas that found another value is a fail naming the value it expected', () => {
    expect(writeReply(200, 'Error: cas mismatch\n', 'value is not 3')).toEqual({
      type: 'fail',
      error: 'value is not 3',
    });
    expect(writeReply(200, 'done\n', 'value is not 3')).toEqual({ type: 'ok' });
  });

  it('a read gives its value, null for no row, and fails on any error (it changes nothing)', () => {
    expect(readReply(200, '42\n')).toEqual({ type: 'ok', value: 42 });
    expect(readReply(200, 'Error: sql: no rows in result set\n')).toEqual({ type: 'ok', value: null });
    expect(readReply(200, 'Error: call query-sql (budget 5s): receive: header: EOF').type).toBe('fail');
    expect(readReply(200, 'forty-two').type).toBe('fail');
  });
});
