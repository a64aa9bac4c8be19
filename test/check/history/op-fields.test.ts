import { describe, expect, it } from 'vitest';

import { opFromFields } from '../../../src/check/history/op-fields.js';

const VALID = { type: 'invoke', f: 'read', process: 0, index: 0, time: 0 } as const;

describe('opFromFields', () => {
  it('builds an op, filling index and time with the position and a missing value with null', () => {
    expect(opFromFields({ type: 'ok', f: 'read', process: 3, value: 9007199254740993n }, 7)).toEqual({
      index: 7,
      time: 7,
      type: 'ok',
      process: 3,
      f: 'read',
      value: 9007199254740993n,
    });
    expect(
      opFromFields({ ...VALID, process: 'nemesis', node: 'n1', error: ['timeout', 2n ** 64n] }, 0),
    ).toEqual({
      ...VALID,
      process: 'nemesis',
      value: null,
      node: 'n1',
      error: '["timeout",18446744073709551616]',
    });
  });

  it('reads a time beyond 2^53 ns (absolute clocks) as the nearest number: it only places ops on a drawing', () => {
    expect(opFromFields({ ...VALID, time: 1_700_000_000_000_000_001n }, 0)).toMatchObject({
      time: 1_700_000_000_000_000_000,
    });
  });

  const EXPECTED: Readonly<Record<string, string>> = {
    process: 'process must be an integer or "nemesis" (clients are numbered from 0)',
    index: "index must be an integer >= 0 (the op's place in the history)",
    time: 'time must be an integer >= 0 (ns since the test started)',
    f: 'f must be a name such as read or write',
    node: 'node must be a name such as "n1"',
  };

  it.each([
    ['process', -1, '-1'],
    ['process', 1.5, '1.5'],
    ['process', 2 ** 53, '9007199254740992'],
    ['process', 2n ** 53n + 1n, '9007199254740993'],
    ['process', Infinity, 'Infinity'],
    ['process', '0', '"0"'],
    ['index', -1, '-1'],
    ['index', 0.5, '0.5'],
    ['index', 2n ** 60n, '1152921504606846976'],
    ['index', '1', '"1"'],
    ['time', -5, '-5'],
    ['time', -5n, '-5'],
    ['time', 1.25, '1.25'],
    ['time', NaN, 'NaN'],
    ['time', Infinity, 'Infinity'],
    ['time', 'soon', '"soon"'],
    ['f', '', '""'],
    ['f', 3, '3'],
    ['node', 5, '5'],
    ['node', ['n1'], '["n1"]'],
  ])('refuses %s %s, saying what is expected', (field, value, shown) => {
    expect(opFromFields({ ...VALID, [field]: value }, 0)).toBe(`${EXPECTED[field]}; got ${shown}`);
  });

  it('quotes a long offending field on one short line', () => {
    const message = opFromFields({ ...VALID, process: 'x\n'.repeat(100) }, 0) as string;
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(160);
    expect(message).toMatch(/…$/);
  });
});
