import { describe, expect, it } from 'vitest';

import { parseProbeLine } from '../../src/observe/probe-events.js';

describe('parseProbeLine', () => {
  it('parses probe lines into probe events of the given node', () => {
    expect(parseProbeLine('n2', '{"ts":5,"type":"send","attrs":{"msg":"m1","peer":"n3"}}')).toEqual({
      ts: 5,
      node: 'n2',
      source: 'probe',
      type: 'send',
      attrs: { msg: 'm1', peer: 'n3' },
    });
    expect(parseProbeLine('n1', '{"ts":7,"type":"tick"}')).toEqual({
      ts: 7,
      node: 'n1',
      source: 'probe',
      type: 'tick',
    });
  });

  it('rejects malformed lines and drops non-scalar attributes', () => {
    expect(parseProbeLine('n1', '{"ts":7,"ty')).toBeUndefined();
    expect(parseProbeLine('n1', '{"type":"x"}')).toBeUndefined();
    expect(parseProbeLine('n1', '{"ts":1,"type":""}')).toBeUndefined();
    expect(parseProbeLine('n1', '[1,2]')).toBeUndefined();
    expect(parseProbeLine('n1', '{"ts":1,"type":"x","attrs":{"a":[1],"b":2}}')?.attrs).toEqual({ b: 2 });
  });
});
