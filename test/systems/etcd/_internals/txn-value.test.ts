import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodeTxnValue, encodeTxnValue } from '../../../../src/systems/etcd/_internals/txn-value.js';

describe('transactional values as etcd stores them', () => {
  it('decodes what it encodes: lists and registers', () => {
    const value = fc.oneof(fc.nat(), fc.array(fc.nat()));
    fc.assert(
      fc.property(value, (v) => {
        expect(decodeTxnValue(encodeTxnValue(v))).toEqual(v);
      }),
    );
    expect(encodeTxnValue([1, 2, 3])).toBe('[1,2,3]');
    expect(encodeTxnValue(7)).toBe('7');
  });

  it('refuses text it did not write', () => {
    for (const text of ['', 'x', '1.5', '[1,"a"]', '{}', 'null', '"7"']) {
      expect(decodeTxnValue(text)).toBeUndefined();
    }
  });
});
