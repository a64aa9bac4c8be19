import { describe, expect, it } from 'vitest';

import { parseJepsenLog } from '../../../src/check/history/jepsen-log.js';

describe('parseJepsenLog', () => {
  it('reads op lines with tabs or spaces, nil, cas pairs, keywords and nemesis ops', () => {
    const text = [
      'INFO  jepsen.util - 0\t:invoke\t:read\tnil',
      '2017-01-01 INFO [main] jepsen.core - Running test',
      'INFO  jepsen.util - 1   :invoke :cas    [3 0]',
      'INFO  jepsen.util - 0\t:ok\t:read\t3',
      'INFO  jepsen.util - :nemesis\t:info\t:start\tnil',
      'INFO  jepsen.util - 1\t:info\t:cas\t:timed-out',
      '',
    ].join('\n');
    const parsed = parseJepsenLog(text, 'etcd.log');
    expect(parsed.format).toBe('jepsen-log');
    expect(parsed.lines).toEqual([1, 3, 4, 5, 6]);
    expect(parsed.ops).toEqual([
      { index: 0, time: 0, type: 'invoke', process: 0, f: 'read', value: null },
      { index: 1, time: 1, type: 'invoke', process: 1, f: 'cas', value: [3, 0] },
      { index: 2, time: 2, type: 'ok', process: 0, f: 'read', value: 3 },
      { index: 3, time: 3, type: 'info', process: 'nemesis', f: 'start', value: null },
      { index: 4, time: 4, type: 'info', process: 1, f: 'cas', value: 'timed-out' },
    ]);
  });

  it('names the file and line of an op line it cannot read', () => {
    const text = 'INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:done\t:read\t3\n';
    expect(() => parseJepsenLog(text, 'etcd.log')).toThrow(
      /^etcd\.log:2: type must be one of invoke, ok, fail, info/,
    );
    const badValue = 'INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2\n';
    expect(() => parseJepsenLog(badValue, 'etcd.log')).toThrow(/^etcd\.log:1: "\]" missing/);
  });

  it('refuses a file with no op line at all', () => {
    expect(() => parseJepsenLog('INFO jepsen.core - hello\n', 'x.log')).toThrow(
      /^x\.log:1: no Jepsen op lines/,
    );
  });
});

describe('parseJepsenLog with integers beyond 2^53', () => {
  it('keeps values exact, and refuses a process number that would round onto another', () => {
    const text = 'INFO  jepsen.util - 0\t:invoke\t:write\t9007199254740993\n';
    expect(parseJepsenLog(text, 'etcd.log').ops[0].value).toBe(9007199254740993n);
    const big =
      'INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 9007199254740993\t:invoke\t:read\tnil\n';
    expect(() => parseJepsenLog(big, 'etcd.log')).toThrow(
      /^etcd\.log:2: process must be an integer or "nemesis" \(clients are numbered from 0\); got 9007199254740993$/,
    );
  });
});
