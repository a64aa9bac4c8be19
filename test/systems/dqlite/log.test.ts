import { describe, expect, it } from 'vitest';

import { parseDqliteLog } from '../../../src/systems/dqlite/log.js';
import { parseClusterJson } from '../../../src/systems/dqlite/shell.js';

describe('parseDqliteLog', () => {
  it('reads raft state changes, terms and snapshots from LIBRAFT_TRACE lines', () => {
    expect(parseDqliteLog('LIBRAFT   1795941277400518019 src/convert.c:23 old_state:2 new_state:3')).toEqual({
      type: 'became-leader',
      attrs: { from: 2, to: 3 },
    });
    expect(
      parseDqliteLog(
        'LIBRAFT   1795941278354444852 src/recv.c:127 remote term 4 is higher than 3 -> bump local term',
      ),
    ).toEqual({ type: 'term-bump', attrs: { term: 4, previous: 3 } });
    expect(parseDqliteLog('LIBRAFT   1 src/replication.c:1 take snapshot at 1024')).toEqual({
      type: 'snapshot-take',
      attrs: { index: 1024 },
    });
  });

  it('skips per-write traces and reads the go-dqlite log', () => {
    expect(parseDqliteLog('LIBRAFT   1 src/replication.c:1 new commit index 17')).toBeUndefined();
    expect(parseDqliteLog('LIBDQLITE 1 leader__exec:1 leader exec')).toBeUndefined();
    expect(
      parseDqliteLog(
        '2026/11/29 08:34:37 10.0.0.2:8001: WARN: attempt 1: server 10.0.0.1:9001: no known leader',
      ),
    ).toEqual({
      type: 'app-no-leader',
    });
  });
});

describe('dqlite shell output', () => {
  it('reads .cluster JSON', () => {
    expect(parseClusterJson('[{"ID":1,"Address":"10.0.0.1:9001","Role":0}]')).toEqual([
      { address: '10.0.0.1:9001', role: 0, id: '1' },
    ]);
    expect(parseClusterJson('Error: no leader')).toBeUndefined();
  });
});
