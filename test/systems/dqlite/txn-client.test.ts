import { describe, expect, it } from 'vitest';

import { parseReply } from '../../../src/systems/dqlite/txn-client.js';
import type { MicroOp } from '../../../src/systems/system.js';

const OPS: readonly MicroOp[] = [
  ['append', 'k1', 3],
  ['r', 'k1', null],
  ['r', 'k2', null],
];

describe('parseReply (our dqlite app, POST /txn)', () => {
  it('fills in the reads of an ok reply', () => {
    const body = JSON.stringify({
      type: 'ok',
      value: [
        ['append', 'k1', 3],
        ['r', 'k1', [1, 3]],
        ['r', 'k2', null],
      ],
    });
    expect(parseReply(OPS, 200, body)).toEqual({
      type: 'ok',
      value: [
        ['append', 'k1', 3],
        ['r', 'k1', [1, 3]],
        ['r', 'k2', null],
      ],
    });
    expect(parseReply([['r', 'x', null]], 200, '{"type":"ok","value":[["r","x",7]]}')).toEqual({
      type: 'ok',
      value: [['r', 'x', 7]],
    });
  });

  it('passes on the app’s own fail and info', () => {
    expect(parseReply(OPS, 200, '{"type":"fail","error":"begin: driver: bad connection"}')).toEqual({
      type: 'fail',
      error: 'begin: driver: bad connection',
    });
    expect(parseReply(OPS, 200, '{"type":"info","error":"commit: leadership lost"}')).toEqual({
      type: 'info',
      error: 'commit: leadership lost',
    });
  });

  it('calls anything else info: the transaction may have run', () => {
    const replies: readonly [number, string][] = [
      [200, 'Error: something'],
      [500, '{"type":"fail","error":"x"}'],
      [200, '{"type":"fail"}'],
      [200, '{"type":"ok"}'],
      [200, '{"type":"ok","value":[["append","k1",3]]}'],
      [200, '{"type":"ok","value":[["append","k1",4],["r","k1",null],["r","k2",null]]}'],
      [200, '{"type":"ok","value":[["append","k1",3],["r","k1","1 3"],["r","k2",null]]}'],
      [200, '{"type":"ok","value":[["append","k1",3],["r","k9",null],["r","k2",null]]}'],
    ];
    for (const [status, body] of replies) expect(parseReply(OPS, status, body).type, body).toBe('info');
  });
});
