import { describe, expect, it } from 'vitest';

import { readEdnForms, readEdnValue } from '../../../src/check/history/edn.js';
import { HistoryError } from '../../../src/check/history/history-error.js';

describe('readEdnForms', () => {
  it('reads the values Jepsen histories use', () => {
    const text = `{:type :invoke, :f :cas, :value [1 [2 3]], :process 0, :time 12, :index 0, :ok? true, :x nil}
{:s #{1 2}, :l (1 -2.5 3N), :str "a \\"q\\"\\n", :c \\a, :neg false} ; trailing comment
#_{:discarded 1} #jepsen.history.Op{:type :ok, :sym foo/bar}`;
    expect(readEdnForms(text, 'h.edn')).toEqual([
      {
        line: 1,
        value: {
          type: 'invoke',
          f: 'cas',
          value: [1, [2, 3]],
          process: 0,
          time: 12,
          index: 0,
          'ok?': true,
          x: null,
        },
      },
      { line: 2, value: { s: [1, 2], l: [1, -2.5, 3], str: 'a "q"\n', c: 'a', neg: false } },
      { line: 3, value: { type: 'ok', sym: 'foo/bar' } },
    ]);
  });

  it('reads a history written as one vector, element by element with their lines', () => {
    const forms = readEdnForms('[{:type :invoke}\n {:type :ok}\n]', 'h.edn');
    expect(forms).toEqual([
      { line: 1, value: { type: 'invoke' } },
      { line: 2, value: { type: 'ok' } },
    ]);
  });

  it('names the file and line of a syntax error', () => {
    expect(() => readEdnForms('{:a 1}\n{:b [1 2}', 'x.edn')).toThrow(HistoryError);
    expect(() => readEdnForms('{:a 1}\n{:b [1 2}', 'x.edn')).toThrow(/^x\.edn:2: unexpected "}"/);
    expect(() => readEdnForms('{:a 1}\n\n{:b "open', 'x.edn')).toThrow(/^x\.edn:3: a string is not closed/);
    expect(() => readEdnForms('{:a}', 'x.edn')).toThrow(/^x\.edn:1: a map has a key without a value/);
    expect(() => readEdnForms('[{:a 1}', 'x.edn')).toThrow(/^x\.edn:1: "\]" missing/);
  });
});

describe('readEdnValue', () => {
  it('reads one value, a vector staying a vector', () => {
    expect(readEdnValue('[3 0]', 'f', 7)).toEqual([3, 0]);
    expect(readEdnValue('nil', 'f', 7)).toBeNull();
    expect(readEdnValue(':timed-out', 'f', 7)).toBe('timed-out');
  });

  it('rejects trailing text, naming the line it was given', () => {
    expect(() => readEdnValue('1 2', 'f.log', 7)).toThrow(/^f\.log:7: expected one value/);
  });
});
