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

describe('readEdnValue with integers beyond 2^53', () => {
  it('keeps plain and N (BigInt) integers exact, as bigints; safe ones and decimals as numbers', () => {
    expect(
      readEdnValue('[9007199254740993 9007199254740993N -98765432109876543210 3N 0x20000000000001]', 'f', 1),
    ).toEqual([9007199254740993n, 9007199254740993n, -98765432109876543210n, 3, 9007199254740993n]);
    expect(readEdnValue('[9007199254740991 2.5 1e3 7M]', 'f', 1)).toEqual([9007199254740991, 2.5, 1000, 7]);
  });

  it('refuses numbers it cannot read exactly: non-finite, octal, too long', () => {
    expect(() => readEdnValue('##Inf', 'f', 4)).toThrow(/^f:4: cannot read ##Inf: non-finite numbers/);
    expect(() => readEdnValue('1e400', 'f', 4)).toThrow(/^f:4: number 1e400 is out of range$/);
    expect(() => readEdnValue('010', 'f', 4)).toThrow(
      /^f:4: cannot read number "010": Clojure reads a leading 0/,
    );
    expect(() => readEdnValue('1'.repeat(1001), 'f', 4)).toThrow(/^f:4: number 1+ is out of range$/);
  });
});

describe('readEdnForms on hostile input', () => {
  it('refuses nesting deeper than 100 levels with a HistoryError, not a stack overflow', () => {
    for (const open of ['[', '(', '{:a ', '#{', '#_ ', '#tag ']) {
      const text = `{:a 1}\n${open.repeat(5000)}`;
      const error = catchError(() => readEdnForms(text, 'deep.edn'));
      expect(error, open).toBeInstanceOf(HistoryError);
      expect(error.message, open).toBe('deep.edn:2: nested deeper than 100 levels');
    }
    expect(readEdnValue(`${'['.repeat(99)}${']'.repeat(99)}`, 'f', 1)).toBeInstanceOf(Array);
  });

  it('refuses a key twice in one map, including a keyword and a string of the same name', () => {
    expect(() => readEdnForms('{:a 1\n :a 2}', 'x.edn')).toThrow(
      /^x\.edn:2: the key "a" appears twice in one map$/,
    );
    expect(() => readEdnForms('{:a 1 "a" 2}', 'x.edn')).toThrow(HistoryError);
  });

  it('reads \\u escapes and refuses bad ones; keeps a __proto__ key as a key', () => {
    expect(readEdnValue('["\\u00e9" \\u00e9 \\a]', 'f', 1)).toEqual(['é', 'é', 'a']);
    expect(() => readEdnValue('"\\u00g1"', 'f', 1)).toThrow(/^f:1: bad string escape "\\u00g1"$/);
    expect(() => readEdnValue('[\\', 'f', 1)).toThrow(HistoryError);
    const map = readEdnValue('{:__proto__ {:polluted 1}}', 'f', 1) as Record<string, unknown>;
    expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
    expect(Object.keys(map)).toEqual(['__proto__']);
  });
});

function catchError(f: () => unknown): Error {
  try {
    f();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}
