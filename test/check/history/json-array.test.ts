import { describe, expect, it } from 'vitest';

import { parseJsonArray } from '../../../src/check/history/json-array.js';

describe('parseJsonArray', () => {
  it('reads a one-line array of op objects as elle-cli and Knossos write them', () => {
    const text =
      '[{"process":0,"type":"invoke","f":"cas","value":[3,4]},{"type":"fail","f":"release","process":1,"time":342667129,"error":"not-held","index":1},{"type":"info","f":"start","process":"nemesis"}]';
    const parsed = parseJsonArray(text, 'h.json');
    expect(parsed.format).toBe('json');
    expect(parsed.lines).toEqual([1, 1, 1]);
    expect(parsed.ops).toEqual([
      { index: 0, time: 0, type: 'invoke', process: 0, f: 'cas', value: [3, 4] },
      { index: 1, time: 342667129, type: 'fail', process: 1, f: 'release', value: null, error: 'not-held' },
      { index: 2, time: 2, type: 'info', process: 'nemesis', f: 'start', value: null },
    ]);
  });

  it('gives each op the line it starts on in a pretty-printed array, and reads EDN keywords written as strings', () => {
    const text = [
      '[',
      '  {":type": ":invoke", ":f": ":txn", ":value": [[":append", "x", 1]], ":process": 0},',
      '  {',
      '    ":type": ":ok",',
      '    ":f": ":txn", ":value": [[":append", "x", 1]], ":process": 0',
      '  }',
      ']',
      '',
    ].join('\n');
    const parsed = parseJsonArray(text, 'h.json');
    expect(parsed.lines).toEqual([2, 3]);
    expect(parsed.ops.map((op) => [op.type, op.f, op.value])).toEqual([
      ['invoke', 'txn', [['append', 'x', 1]]],
      ['ok', 'txn', [['append', 'x', 1]]],
    ]);
  });

  it('keeps integers beyond 2^53 exact', () => {
    const parsed = parseJsonArray(
      '[{"type":"invoke","f":"write","value":9007199254740993,"process":0}]',
      'h',
    );
    expect(parsed.ops[0].value).toBe(9007199254740993n);
  });

  it('names the line (and column) of what does not read', () => {
    expect(() => parseJsonArray('[\n{"type":"invoke","f":"read","process":0},\n 3\n]', 'h.json')).toThrow(
      /^h\.json:3: an op must be a JSON object/,
    );
    expect(() =>
      parseJsonArray('[\n{"type":"invoke","f":"read","process":0},\n  {"type" "ok"}\n]', 'h.json'),
    ).toThrow(/^h\.json:3: not JSON \(unexpected """, expected ":" at column 11\)$/);
    expect(() => parseJsonArray('[\n{"type":"done","f":"read","process":0}]', 'h.json')).toThrow(
      /^h\.json:2: type must be one of invoke, ok, fail, info; got "done"$/,
    );
    expect(() => parseJsonArray('[{"type":"invoke","f":"read","process":0}\n', 'h.json')).toThrow(
      /^h\.json:2: not JSON \(unexpected end, expected "," or "]"/,
    );
    expect(() => parseJsonArray('[{"type":"invoke","f":"read","process":0}]\n[]', 'h.json')).toThrow(
      /^h\.json:2: not JSON \(unexpected "\[", expected the end of the file/,
    );
  });
});
