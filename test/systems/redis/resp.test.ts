import { describe, expect, it } from 'vitest';

import { parseRedisLog } from '../../../src/systems/redis/log.js';
import { encodeCommand, RespParser } from '../../../src/systems/redis/resp.js';

describe('RESP', () => {
  it('encodes commands as arrays of bulk strings', () => {
    expect(encodeCommand(['SET', 'k', 'é']).toString()).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n');
  });

  it('parses every reply type across chunk boundaries', () => {
    const wire = Buffer.from(
      '+OK\r\n-READONLY no\r\n:7\r\n$-1\r\n$3\r\nabc\r\n*2\r\n$1\r\na\r\n*1\r\n:1\r\n',
    );
    for (let cut = 1; cut < wire.length; cut++) {
      const parser = new RespParser();
      const replies = [...parser.push(wire.subarray(0, cut)), ...parser.push(wire.subarray(cut))];
      expect(replies).toEqual(['OK', { error: 'READONLY no' }, 7, null, 'abc', ['a', [1]]]);
    }
  });
});

describe('parseRedisLog', () => {
  it('names sentinel events and server replication events', () => {
    expect(
      parseRedisLog('15608:X 29 Nov 2026 08:47:44.931 # +switch-master mymaster 10.0.0.1 6379 10.0.0.2 6379'),
    ).toEqual({
      type: 'sentinel+switch-master',
    });
    expect(parseRedisLog('15608:X 29 Nov 2026 08:47:44.768 # +new-epoch 4')).toEqual({
      type: 'sentinel+new-epoch',
      attrs: { epoch: 4 },
    });
    expect(parseRedisLog('15608:X 29 Nov 2026 08:47:44.768 # +sdown master mymaster 10.0.0.1 6379')).toEqual({
      type: 'sentinel+sdown-master',
    });
    expect(parseRedisLog('10264:S 29 Nov 2026 08:42:58.993 * Full resync from master: 7e74ad:4242')).toEqual({
      type: 'full-resync',
      attrs: { offset: 4242 },
    });
    expect(
      parseRedisLog('10264:M 29 Nov 2026 08:42:58.993 * MASTER MODE enabled (user request from x)'),
    ).toEqual({
      type: 'promoted',
    });
    // The role a server starts in begins a split brain (`REDIS_FAILOVER_LOSS.splitBrain`).
    expect(parseRedisLog('10538:M 07 Dec 2026 10:26:39.618 * Ready to accept connections')).toEqual({
      type: 'ready',
      attrs: { role: 'leader' },
    });
    expect(parseRedisLog('10546:S 07 Dec 2026 10:26:39.742 * Ready to accept connections')).toEqual({
      type: 'ready',
      attrs: { role: 'follower' },
    });
    expect(parseRedisLog('random text')).toBeUndefined();
  });
});
