import { describe, expect, it } from 'vitest';

import { keyword } from '../../../src/check/history/edn-types.js';
import { parseJepsenEdn } from '../../../src/check/history/jepsen-edn.js';
import { checkOps } from '../../../src/check/linearizable.js';

describe('parseJepsenEdn', () => {
  it('reads Jepsen op maps, independent [k v] values and nemesis ops', () => {
    const text = `{:type :invoke, :f :write, :value [:x 3], :process 0, :time 123, :index 0}
{:type :info, :f :start-partition, :value :majority, :process :nemesis, :time 150, :index 1}
{:type :ok, :f :write, :value [:x 3], :process 0, :time 200, :index 2}`;
    const parsed = parseJepsenEdn(text, 'history.edn');
    expect(parsed.format).toBe('edn');
    expect(parsed.ops).toEqual([
      { index: 0, time: 123, type: 'invoke', process: 0, f: 'write', value: [keyword('x'), 3] },
      {
        index: 1,
        time: 150,
        type: 'info',
        process: 'nemesis',
        f: 'start-partition',
        value: keyword('majority'),
      },
      { index: 2, time: 200, type: 'ok', process: 0, f: 'write', value: [keyword('x'), 3] },
    ]);
  });

  it('reads Jepsen independent tuples as [key, value], marking the history independent', () => {
    const text = `{:type :invoke, :f :write, :value #jepsen.independent.Tuple{:key 1, :value 3}, :process 0}
{:type :ok, :f :write, :value #jepsen.independent.Tuple{:key 1, :value 3}, :process 0}`;
    const parsed = parseJepsenEdn(text, 'history.edn');
    expect(parsed.independent).toBe(true);
    expect(parsed.ops.map((o) => o.value)).toEqual([
      [1, 3],
      [1, 3],
    ]);
    expect(parseJepsenEdn('{:type :invoke, :f :read, :process 0}', 'h.edn').independent).toBeUndefined();
  });

  it('reads Knossos op tuples [process type f value], one a line or in one collection', () => {
    for (const text of [
      '[0 :invoke :write 3]\n[0 :ok :write 3]',
      '[[0 :invoke :write 3]\n [0 :ok :write 3]]',
    ]) {
      const parsed = parseJepsenEdn(text, 'h.edn');
      expect(parsed.ops).toEqual([
        { index: 0, time: 0, type: 'invoke', process: 0, f: 'write', value: 3 },
        { index: 1, time: 1, type: 'ok', process: 0, f: 'write', value: 3 },
      ]);
      expect(parsed.lines).toEqual([1, 2]);
    }
  });

  it('fills a missing index and time with the position and a missing value with nil', () => {
    const parsed = parseJepsenEdn('[{:type :invoke :f :read :process 2}]', 'h.edn');
    expect(parsed.ops).toEqual([{ index: 0, time: 0, type: 'invoke', process: 2, f: 'read', value: null }]);
  });

  it('names the file and line of a form that is not an op', () => {
    expect(() => parseJepsenEdn('{:type :invoke :f :read :process 0}\n[1 2]', 'h.edn')).toThrow(
      /^h\.edn:2: an op must be a map/,
    );
    expect(() =>
      parseJepsenEdn('{:type :invoke :f :read :process 0}\n\n{:type :ok :process 0}', 'h.edn'),
    ).toThrow(/^h\.edn:3: f must be a name/);
  });
});

describe('parseJepsenEdn with integers beyond 2^53', () => {
  it('keeps them exact, so a read of 2^53 after a write of 2^53 + 1 (N or not) is not linearizable', async () => {
    for (const written of ['9007199254740993', '9007199254740993N']) {
      const text = `{:type :invoke, :f :write, :value ${written}, :process 0}
{:type :ok, :f :write, :value ${written}, :process 0}
{:type :invoke, :f :read, :value nil, :process 1}
{:type :ok, :f :read, :value 9007199254740992, :process 1}`;
      const { ops } = parseJepsenEdn(text, 'history.edn');
      expect(ops[0].value).toBe(9007199254740993n);
      expect((await checkOps(ops, { model: 'register' })).valid).toBe(false);
    }
  });

  it('keeps [k v] keys that differ beyond 2^53 apart', async () => {
    const text = `[{:type :invoke, :f :write, :value [9007199254740993N 1], :process 0}
{:type :ok, :f :write, :value [9007199254740993N 1], :process 0}
{:type :invoke, :f :read, :value [9007199254740992N nil], :process 1}
{:type :ok, :f :read, :value [9007199254740992N 1], :process 1}]`;
    const result = await checkOps(parseJepsenEdn(text, 'history.edn').ops, { model: 'kv' });
    expect(result.partitions).toBe(2);
    expect(result.valid).toBe(false);
  });

  it('refuses an op nested deeper than 100 levels with one line naming file:line', () => {
    const text = `{:type :invoke, :f :read, :process 0}\n{:type :ok, :f :read, :process 0, :value ${'['.repeat(5000)}`;
    expect(() => parseJepsenEdn(text, 'h.edn')).toThrow(/^h\.edn:2: nested deeper than 100 levels$/);
  });
});
