import { describe, expect, it } from 'vitest';

import { parseHistoryJsonl } from '../../../src/check/history/jsonl.js';

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
