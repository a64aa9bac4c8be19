import { describe, expect, it } from 'vitest';

import { ednText } from '../../../src/check/_internals/edn-text.js';
import { readEdnForms, readEdnValue } from '../../../src/check/history/edn.js';
import {
  BigDec,
  EdnChar,
  EdnDouble,
  EdnMap,
  EdnRatio,
  EdnSet,
  EdnSymbol,
  Tagged,
  keyword,
  plainValue,
} from '../../../src/check/history/edn-types.js';
import { ednOpFields } from '../../../src/check/history/edn-op.js';
import { HistoryError } from '../../../src/check/history/history-error.js';

describe('readEdnForms', () => {
  it('reads the values Jepsen histories use, each keeping its EDN type', () => {
    const text = `{:type :invoke, :f :cas, :value [1 [2 3]], :process 0, :time 12, :index 0, :ok? true, :x nil}
{:s #{1 2}, :l (1 -2.5 3N), :str "a \\"q\\"\\n", :c \\a, :neg false} ; trailing comment
#_{:discarded 1} #jepsen.history.Op{:type :ok, :sym foo/bar}`;
    const forms = readEdnForms(text, 'h.edn');
    expect(forms.map((f) => [f.line, ednText(f.value, false)])).toEqual([
      [1, '{:type :invoke, :f :cas, :value [1 [2 3]], :process 0, :time 12, :index 0, :ok? true, :x nil}'],
      [2, '{:s #{1 2}, :l [1 -2.5 3], :str "a \\"q\\"\\n", :c \\a, :neg false}'],
      [3, '#jepsen.history.Op {:type :ok, :sym foo/bar}'],
    ]);
    const first = forms[0].value as EdnMap;
    expect(first.get('type')).toBe(keyword('invoke'));
    const second = forms[1].value as EdnMap;
    expect(second.get('s')).toBeInstanceOf(EdnSet);
    expect(second.get('c')).toEqual(new EdnChar('a'));
    expect((forms[2].value as Tagged).value).toBeInstanceOf(EdnMap);
    expect(((forms[2].value as Tagged).value as EdnMap).get('sym')).toEqual(new EdnSymbol('foo/bar'));
  });

  it('reads a history written as one vector, element by element with their lines', () => {
    const forms = readEdnForms('[{:type :invoke}\n {:type :ok}\n]', 'h.edn');
    expect(forms.map((f) => [f.line, ednText(f.value, false)])).toEqual([
      [1, '{:type :invoke}'],
      [2, '{:type :ok}'],
    ]);
  });

  it('reads Knossos op tuples, one a line, as forms of their own', () => {
    const forms = readEdnForms('[0 :invoke :read nil]\n[0 :ok :read 3]\n', 'h.edn');
    expect(forms.map((f) => [f.line, ednText(f.value, false)])).toEqual([
      [1, '[0 :invoke :read nil]'],
      [2, '[0 :ok :read 3]'],
    ]);
    expect(readEdnForms('[0 :invoke :read nil]', 'h.edn')).toHaveLength(1);
    expect(() => readEdnForms('[{:type :ok}]\n[{:type :ok}]', 'h.edn')).toThrow(
      /^h\.edn:2: text after the history collection: write one collection of ops, or one op a line$/,
    );
  });

  it('drops metadata, as it does not count in equality', () => {
    expect(ednText(readEdnValue('^{:a 1} [1]', 'f', 1), false)).toBe('[1]');
    expect(ednText(readEdnValue('[^:tag x 2]', 'f', 1), false)).toBe('[x 2]');
  });

  it('keeps tags, checking #inst and #uuid', () => {
    expect(readEdnValue('#inst "2026-12-03T10:00:00Z"', 'f', 1)).toEqual(
      new Tagged('inst', '2026-12-03T10:00:00Z'),
    );
    expect(() => readEdnValue('#inst "yesterday"', 'f', 2)).toThrow(
      /^f:2: #inst "yesterday" is not an instant: write #inst "2026-12-03T10:00:00.000Z"$/,
    );
    expect(() => readEdnValue('#uuid "x"', 'f', 2)).toThrow(/^f:2: #uuid "x" is not a UUID/);
    expect(readEdnValue('#my/tag [1]', 'f', 1)).toEqual(new Tagged('my/tag', [1]));
  });

  it('refuses an element twice in one set, under EDN equality', () => {
    expect(() => readEdnValue('#{1 2 1}', 'f', 3)).toThrow(/^f:3: the element 1 appears twice in one set$/);
    expect(() => readEdnValue('#{[1 2] (1 2)}', 'f', 3)).toThrow(/appears twice in one set/);
    expect(readEdnValue('#{:a "a" a \\a}', 'f', 3)).toBeInstanceOf(EdnSet);
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
    expect(readEdnValue(':timed-out', 'f', 7)).toBe(keyword('timed-out'));
    expect(readEdnValue('timed-out', 'f', 7)).toEqual(new EdnSymbol('timed-out'));
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
    expect(readEdnValue('[9007199254740991 2.5 1e3 7M 0.10M]', 'f', 1)).toEqual([
      9007199254740991,
      2.5,
      new EdnDouble(1000),
      new BigDec('7'),
      new BigDec('0.10'),
    ]);
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

describe('readEdnValue with ratios', () => {
  it('reads them in lowest terms, as Clojure does, and a whole one as its integer', () => {
    expect(readEdnValue('[1/2 2/4 -3/6 +6/4 4/2 0/7 36893488147419103232/3]', 'f', 1)).toEqual([
      new EdnRatio(1n, 2n),
      new EdnRatio(1n, 2n),
      new EdnRatio(-1n, 2n),
      new EdnRatio(3n, 2n),
      2,
      0,
      new EdnRatio(36893488147419103232n, 3n),
    ]);
    expect(ednText(readEdnValue('#{2/4 1/3}', 'f', 1), true)).toBe('#{1/2 1/3}');
    expect(plainValue(readEdnValue('3/4', 'f', 1))).toBe(0.75);
  });

  it('refuses a zero denominator and a sign on the denominator', () => {
    expect(() => readEdnValue('1/0', 'f', 2)).toThrow(/^f:2: cannot read ratio 1\/0: divide by zero$/);
    expect(() => readEdnValue('1/-2', 'f', 2)).toThrow(/^f:2: cannot read number "1\/-2"/);
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

  it('refuses a key twice in one map, and tells a keyword from a string of the same name', () => {
    expect(() => readEdnForms('{:a 1\n :a 2}', 'x.edn')).toThrow(
      /^x\.edn:2: the key :a appears twice in one map$/,
    );
    expect(() => readEdnForms('{#{1 2} 1\n #{2 1} 2}', 'x.edn')).toThrow(
      /^x\.edn:2: the key #\{2 1\} appears twice/,
    );
    expect((readEdnValue('{:a 1 "a" 2 a 3}', 'f', 1) as EdnMap).entries).toHaveLength(3);
  });

  it('reads \\u escapes and refuses bad ones; reads a __proto__ key as a plain field', () => {
    expect(readEdnValue('["\\u00e9" \\u00e9 \\a]', 'f', 1)).toEqual([
      'é',
      new EdnChar('é'),
      new EdnChar('a'),
    ]);
    expect(() => readEdnValue('"\\u00g1"', 'f', 1)).toThrow(/^f:1: bad string escape "\\u00g1"$/);
    expect(() => readEdnValue('[\\', 'f', 1)).toThrow(HistoryError);
    const map = plainValue(readEdnValue('{:__proto__ {:polluted 1}}', 'f', 1)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
    expect(Object.keys(map)).toEqual(['__proto__']);
    const fields = ednOpFields(readEdnValue('{:__proto__ {:polluted 1}, :type :ok}', 'f', 1))?.fields ?? {};
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.keys(fields)).toEqual(['__proto__', 'type']);
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
