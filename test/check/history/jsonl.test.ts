import { describe, expect, it } from 'vitest';

import { HistoryError } from '../../../src/check/history/history-error.js';
import { parseHistoryJsonl } from '../../../src/check/history/jsonl.js';
import { checkOps } from '../../../src/check/linearizable.js';

describe('parseHistoryJsonl', () => {
  it('reads ops, keeping node and error and skipping blank lines', () => {
    const text = [
      '{"index":0,"time":10,"type":"invoke","process":0,"f":"write","value":["k",1],"node":"n1"}',
      '',
      '{"index":1,"time":20,"type":"info","process":0,"f":"write","value":["k",1],"error":"timeout"}',
      '{"index":2,"time":30,"type":"info","process":"nemesis","f":"kill","value":"one"}',
    ].join('\n');
    const parsed = parseHistoryJsonl(text, 'history.jsonl');
    expect(parsed.lines).toEqual([1, 3, 4]);
    expect(parsed.ops).toEqual([
      { index: 0, time: 10, type: 'invoke', process: 0, f: 'write', value: ['k', 1], node: 'n1' },
      { index: 1, time: 20, type: 'info', process: 0, f: 'write', value: ['k', 1], error: 'timeout' },
      { index: 2, time: 30, type: 'info', process: 'nemesis', f: 'kill', value: 'one' },
    ]);
  });

  it('names the file and line of a malformed op and says what is wrong', () => {
    const ok = '{"index":0,"time":1,"type":"invoke","process":0,"f":"read","value":null}';
    expect(() => parseHistoryJsonl(`${ok}\n{"index":1,`, 'h.jsonl')).toThrow(/^h\.jsonl:2: not JSON/);
    expect(() => parseHistoryJsonl(`${ok}\n[1,2]`, 'h.jsonl')).toThrow(
      /^h\.jsonl:2: an op must be a JSON object/,
    );
    expect(() => parseHistoryJsonl(`${ok}\n{"type":"done","process":0,"f":"read"}`, 'h.jsonl')).toThrow(
      /^h\.jsonl:2: type must be one of invoke, ok, fail, info; got "done"/,
    );
    expect(() => parseHistoryJsonl(`{"type":"ok","process":"x","f":"read"}`, 'h.jsonl')).toThrow(
      /^h\.jsonl:1: process must be an integer or "nemesis"/,
    );
  });
});

/** A write of `written` then a read returning `read`, on one register (or key, if given). */
function writeThenRead(written: string, read: string, keys?: readonly [string, string]): string {
  const value = (v: string, k: string | undefined): string => (k === undefined ? v : `[${k},${v}]`);
  return [
    `{"index":0,"time":1,"type":"invoke","process":0,"f":"write","value":${value(written, keys?.[0])}}`,
    `{"index":1,"time":2,"type":"ok","process":0,"f":"write","value":${value(written, keys?.[0])}}`,
    `{"index":2,"time":3,"type":"invoke","process":1,"f":"read","value":${value('null', keys?.[1])}}`,
    `{"index":3,"time":4,"type":"ok","process":1,"f":"read","value":${value(read, keys?.[1])}}`,
  ].join('\n');
}

describe('parseHistoryJsonl with integers beyond 2^53', () => {
  it('keeps them exact, as bigints, and safe integers as numbers', () => {
    const parsed = parseHistoryJsonl(
      writeThenRead('9007199254740993', '-123456789012345678901234567890'),
      'h',
    );
    expect(parsed.ops.map((op) => op.value)).toEqual([
      9007199254740993n,
      9007199254740993n,
      null,
      -123456789012345678901234567890n,
    ]);
    expect(parseHistoryJsonl(writeThenRead('9007199254740991', '1.5e3'), 'h').ops[3].value).toBe(1500);
  });

  it('so a read of 2^53 after a write of 2^53 + 1 is not linearizable', async () => {
    const parsed = parseHistoryJsonl(writeThenRead('9007199254740993', '9007199254740992'), 'h');
    const result = await checkOps(parsed.ops, { model: 'register' });
    expect(result.valid).toBe(false);
    expect(result.counterexample?.stateBefore).toBe('9007199254740993');
  });

  it('so keys that differ beyond 2^53 stay apart', async () => {
    const text = writeThenRead('1', '1', ['9007199254740993', '9007199254740992']);
    const result = await checkOps(parseHistoryJsonl(text, 'h').ops, { model: 'kv' });
    expect(result.partitions).toBe(2);
    expect(result.valid).toBe(false);
    expect(result.counterexample?.key).toBe(9007199254740992n);
  });
});

describe('parseHistoryJsonl refusing what JSON.parse would take with a different meaning', () => {
  const op = (value: string): string =>
    `{"index":0,"time":1,"type":"invoke","process":0,"f":"write","value":${value}}`;

  it('refuses a number out of range, a key twice (EDN refuses it too) and nesting deeper than 100 levels', () => {
    expect(() => parseHistoryJsonl(op('1e400'), 'h.jsonl')).toThrow(
      /^h\.jsonl:1: number 1e400 is out of range$/,
    );
    const twice = op('1').replace('"value"', '"value":2,"value"');
    expect(() => parseHistoryJsonl(twice, 'h.jsonl')).toThrow(/^h\.jsonl:1: the key "value" appears twice/);
    expect(() => parseHistoryJsonl(`${twice} `.replace('1}', '12345678901234567}'), 'h.jsonl')).toThrow(
      /^h\.jsonl:1: the key "value" appears twice/,
    );
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect(() => parseHistoryJsonl(op(deep), 'h.jsonl')).toThrow(
      /^h\.jsonl:1: nested deeper than 100 levels$/,
    );
  });

  it('throws HistoryError, one line naming file:line, for each way a line is not JSON', () => {
    for (const value of ['01', '"\\x"', '"\\u12"', '"a\tb"', '[1,]', '{"a" 1}', '-', '1.', 'tru', '"open']) {
      const error = catchError(() => parseHistoryJsonl(op(value), 'h.jsonl'));
      expect(error, value).toBeInstanceOf(HistoryError);
      expect(error.message, value).toMatch(/^h\.jsonl:1: not JSON \([^\n]+ at column \d+\)$/);
    }
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

describe('parseHistoryJsonl on a key written twice', () => {
  it('refuses it though JSON.parse would keep the last, also inside a value', () => {
    const first = '{"type":"invoke","f":"write","value":1,"process":0}';
    expect(() =>
      parseHistoryJsonl(`${first}\n{"type":"ok","f":"write","value":1,"process":0,"f":"read"}`, 'h.jsonl'),
    ).toThrow(/^h\.jsonl:2: the key "f" appears twice in one object/);
    expect(() =>
      parseHistoryJsonl('{"type":"invoke","f":"write","value":{"k":1,"k":2},"process":0}', 'h.jsonl'),
    ).toThrow(/^h\.jsonl:1: the key "k" appears twice/);
  });

  it('still reads a string value holding a quote and a colon', () => {
    const row = '{"type":"invoke","f":"write","value":"a\\":b","process":0}';
    expect(parseHistoryJsonl(row, 'h.jsonl').ops[0].value).toBe('a":b');
  });
});
