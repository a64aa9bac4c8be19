import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { exactJson } from '../../src/core/exact-json.js';

describe('exactJson', () => {
  it('writes what JSON.stringify writes for values without integers beyond 2^53', () => {
    const safe = fc.jsonValue().filter((v) => !JSON.stringify(v).match(/\d{16}|e\+/));
    fc.assert(
      fc.property(safe, fc.constantFrom(0, 2), (value, indent) => {
        expect(exactJson(value, indent)).toBe(JSON.stringify(value, null, indent));
      }),
    );
    const odd = { a: undefined, f: () => 1, d: new Date(0), list: [undefined, () => 1] };
    expect(exactJson(odd)).toBe(JSON.stringify(odd));
    expect(exactJson(undefined)).toBe('null');
  });

  it('writes integers exactly, bigints and doubles alike', () => {
    expect(exactJson([2n ** 64n, -(2n ** 53n) - 1n, 2 ** 60, 1e21, 0.5])).toBe(
      '[18446744073709551616,-9007199254740993,1152921504606846976,1000000000000000000000,0.5]',
    );
    expect(exactJson({ k: [1n] }, 2)).toBe('{\n  "k": [\n    1\n  ]\n}');
  });
});
