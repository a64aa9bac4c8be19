import { describe, expect, it } from 'vitest';

import { ednText } from '../../../src/check/_internals/edn-text.js';
import { EdnMap, EdnSet, keyword } from '../../../src/check/history/edn-types.js';
import { parseJepsenHistoryTxt, parseJepsenLog } from '../../../src/check/history/jepsen-log.js';

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
      { index: 4, time: 4, type: 'info', process: 1, f: 'cas', value: keyword('timed-out') },
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

describe('parseJepsenLog in later log layouts', () => {
  it('reads "INFO [date] jepsen worker N - jepsen.util N" lines (2017 on), spaces or tabs', () => {
    const text = [
      'INFO [2017-03-30 15:28:17,400] jepsen test runner - jepsen.core Relative time begins now',
      'INFO [2017-03-30 15:28:17,423] jepsen worker 2 - jepsen.util 2  :invoke :read nil',
      'INFO [2018-02-04 22:14:07,142] jepsen nemesis - jepsen.util :nemesis\t:info\t:stop\t:network-healed',
      'INFO [2019-04-01 11:25:23,722] jepsen worker 3 - jepsen.util 3\t:invoke\t:cas\t[0 4]',
    ].join('\n');
    const { ops, lines } = parseJepsenLog(text, 'jepsen.log');
    expect(lines).toEqual([2, 3, 4]);
    expect(ops.map((op) => [op.process, op.type, op.f, op.value])).toEqual([
      [2, 'invoke', 'read', null],
      ['nemesis', 'info', 'stop', keyword('network-healed')],
      [3, 'invoke', 'cas', [0, 4]],
    ]);
  });

  it('reads "date{GMT} INFO [jepsen worker N] jepsen.util: N" lines (2020 on)', () => {
    const text = [
      '2021-02-26 23:39:01,300{GMT}\tINFO\t[jepsen worker 1] jepsen.util: 1\t:invoke\t:write\t[0 2]',
      '2020-05-04 12:00:00,123{GMT}\tINFO\t[jepsen worker 0] jepsen.util: 0\t:invoke\t:read\tnil',
      '2025-04-26 03:37:10,938{GMT}\tINFO\t[jepsen worker nemesis] jepsen.util: :nemesis\t:info\t:kill\t{"n1" :killed}',
    ].join('\n');
    expect(parseJepsenLog(text, 'jepsen.log').ops.map((op) => [op.process, op.f, op.value])).toEqual([
      [1, 'write', [0, 2]],
      [0, 'read', null],
      ['nemesis', 'kill', new EdnMap([['n1', keyword('killed')]])],
    ]);
  });

  it('reads the error Jepsen prints after the value, after a tab or spaces', () => {
    const text = [
      'INFO  jepsen.util - 7 :info :write  2 :timeout',
      '2018-06-07 20:12:08,733{GMT}  INFO  [jepsen worker 5] jepsen.util: 5  :fail :write  [1 2] [11 "not a leader"]',
      'INFO  jepsen.util - 3\t:info\t:read\tnil\tindeterminate: Read timed out',
      'INFO  jepsen.util - 4\t:ok\t:read\t5',
    ].join('\n');
    const { ops } = parseJepsenLog(text, 'jepsen.log');
    expect(ops.map((op) => [op.value, op.error])).toEqual([
      [2, ':timeout'],
      [[1, 2], '[11 "not a leader"]'],
      [null, 'indeterminate: Read timed out'],
      [5, undefined],
    ]);
  });

  it('reads values of several tokens: maps, sets, strings with spaces, nested vectors', () => {
    const text = [
      '[jepsen worker 3] jepsen.util: 3  :ok     :transfer       {:from 8, :to 2, :amount 3}',
      'INFO  jepsen.util - 0\t:ok\t:echo\t{:echo "Please echo 125", :msg_id 1}',
      'INFO  jepsen.util - 4\t:ok\t:read\t#{0 7 20}',
      'INFO  jepsen.util - 1\t:ok\t:txn\t[[:r 1 nil] [:append 9 11]]',
      'INFO  jepsen.util - 2\t:invoke\t:echo\t"a string\twith a tab"',
    ].join('\n');
    const values = parseJepsenLog(text, 'x.log').ops.map((op) => op.value);
    expect(values.slice(0, 3).map((v) => ednText(v, false))).toEqual([
      '{:from 8, :to 2, :amount 3}',
      '{:echo "Please echo 125", :msg_id 1}',
      '#{0 7 20}',
    ]);
    expect(values[2]).toBeInstanceOf(EdnSet);
    // A transaction's micro-ops get plain names, as the transactional checks read them.
    expect(values.slice(3)).toEqual([
      [
        ['r', 1, null],
        ['append', 9, 11],
      ],
      'a string\twith a tab',
    ]);
  });

  it('skips jepsen.util lines that are not ops, and names the line of an op that does not read', () => {
    const text = 'INFO  jepsen.util - Waiting for n1...\nINFO  jepsen.util - 0\t:invoke\t:read\tnil\n';
    expect(parseJepsenLog(text, 'x.log').lines).toEqual([2]);
    const bad =
      'INFO  jepsen.util - 0\t:invoke\t:read\tnil\n[jepsen worker 1] jepsen.util: 1\t:ok\t:read\t{:a 1\n';
    expect(() => parseJepsenLog(bad, 'x.log')).toThrow(/^x\.log:2: "\}" missing/);
  });
});

describe('parseJepsenHistoryTxt', () => {
  it('reads lines without a log prefix, nemesis ops, errors, and errors running over lines', () => {
    const text = [
      '3\t:invoke\t:write\t4',
      ':nemesis\t:info\t:start\tnil',
      '3\t:info\t:write\t4\t:timeout',
      '1\t:invoke\t:read\tnil',
      '1\t:info\t:read\tnil\tjava.net.SocketTimeoutException: Read timed out',
      '\tat java.net.SocketInputStream.socketRead0(Native Method)',
      '',
      '2\t:invoke\t:cas\t[4 5]',
      '',
    ].join('\n');
    const parsed = parseJepsenHistoryTxt(text, 'history.txt');
    expect(parsed.format).toBe('jepsen-txt');
    expect(parsed.lines).toEqual([1, 2, 3, 4, 5, 8]);
    expect(parsed.ops.map((op) => [op.process, op.type, op.f, op.value, op.error])).toEqual([
      [3, 'invoke', 'write', 4, undefined],
      ['nemesis', 'info', 'start', null, undefined],
      [3, 'info', 'write', 4, ':timeout'],
      [1, 'invoke', 'read', null, undefined],
      [
        1,
        'info',
        'read',
        null,
        'java.net.SocketTimeoutException: Read timed out\n\tat java.net.SocketInputStream.socketRead0(Native Method)',
      ],
      [2, 'invoke', 'cas', [4, 5], undefined],
    ]);
  });

  it('names the line of a line that is not an op', () => {
    expect(() => parseJepsenHistoryTxt('0\t:invoke\t:read\tnil\nhello\n', 'h.txt')).toThrow(
      /^h\.txt:2: not a history\.txt op: expected <process> :<type> :<f> <value> \[<error>\]/,
    );
    expect(() => parseJepsenHistoryTxt('0\t:invoke\t:read\t[1\n', 'h.txt')).toThrow(
      /^h\.txt:1: "\]" missing/,
    );
    expect(() => parseJepsenHistoryTxt('0\t:invoke\t7\tnil\n', 'h.txt')).toThrow(
      /^h\.txt:1: f must be a name such as read or write; got 7/,
    );
  });
});
