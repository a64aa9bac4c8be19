import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { HistoryError } from '../../../src/check/history/history-error.js';
import { readJsonValue } from '../../../src/check/history/json-value.js';

describe('readJsonValue', () => {
  it('reads what JSON.parse reads, where JSON.parse is exact', () => {
    const text = fc
      .jsonValue()
      .map((v) => JSON.stringify(v))
      .filter((t) => !/\d{16}/.test(t));
    fc.assert(
      fc.property(text, (t) => {
        expect(readJsonValue(t, 'f', 1)).toEqual(JSON.parse(t));
      }),
    );
    const spaced = ' { "a" : [ 1 , -0.5e-3 , true , false , null , "\\u00e9\\n\\"\\/" ] } ';
    expect(readJsonValue(spaced, 'f', 1)).toEqual(JSON.parse(spaced));
  });

  it('reads integer literals beyond 2^53 exactly, as bigints', () => {
    expect(readJsonValue('[9007199254740991, 9007199254740993, -9007199254740993, 1e20]', 'f', 1)).toEqual([
      9007199254740991,
      9007199254740993n,
      -9007199254740993n,
      1e20,
    ]);
  });

  it('refuses what JSON.parse refuses, as a HistoryError naming file:line and the column', () => {
    fc.assert(
      fc.property(fc.string(), (t) => {
        let parsed = true;
        try {
          JSON.parse(t);
        } catch {
          parsed = false;
        }
        fc.pre(!parsed);
        expect(() => readJsonValue(t, 'h.jsonl', 9)).toThrow(HistoryError);
      }),
    );
    expect(() => readJsonValue('{"a":1} x', 'h.jsonl', 9)).toThrow(
      'h.jsonl:9: not JSON (unexpected "x", expected the end of the line at column 9)',
    );
  });

  it('keeps a "__proto__" key as an own key', () => {
    const value = readJsonValue('{"__proto__":{"polluted":true}}', 'f', 1) as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
  });
});

describe('readJsonValue on what JSON readers disagree on or JSON lacks', () => {
  it('refuses a key twice in one object, naming the key and the line', () => {
    expect(() => readJsonValue('{"a": 1, "b": {"c": 2, "c": 3}}', 'h.jsonl', 4)).toThrow(
      /^h\.jsonl:4: the key "c" appears twice in one object: keep one of them$/,
    );
    expect(readJsonValue('{"a": {"c": 2}, "b": {"c": 3}}', 'h.jsonl', 4)).toEqual({
      a: { c: 2 },
      b: { c: 3 },
    });
  });

  it('says JSON has no NaN or Infinity, rather than naming a character', () => {
    for (const literal of ['NaN', 'Infinity', '-Infinity']) {
      expect(() => readJsonValue(`[1, ${literal}]`, 'h.json', 2)).toThrow(
        `h.json:2: ${literal} is not a number JSON has: write null, or the value as a string such as "${literal}"`,
      );
    }
    expect(() => readJsonValue('[1, Nope]', 'h.json', 2)).toThrow(
      /not JSON \(unexpected "N", expected a value/,
    );
  });
});
