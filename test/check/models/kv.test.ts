import { describe, expect, it } from 'vitest';

import { kvModel } from '../../../src/check/models/kv.js';
import { describeCanonical } from '../../../src/check/models/value.js';

describe('kvModel', () => {
  it('partitions by key and steps a register on the value', () => {
    expect(kvModel.partitionKey!('write', ['x', 1])).toBe('x');
    expect(kvModel.partitionKey!('read', [7, null])).toBe(7);
    expect(describeCanonical(kvModel.partitionKey!('read', [['composite'], null]))).toBe('["composite"]');
    const state = kvModel.step(kvModel.init(), kvModel.input('cas', ['x', [null, 2]]), undefined);
    expect(state).toBe(2);
    expect(kvModel.step(2, kvModel.input('read', ['x', null]), kvModel.output('read', ['x', 2]))).toBe(2);
  });

  it('rejects a value that is not [key, value]', () => {
    expect(() => kvModel.partitionKey!('write', 3)).toThrow('a kv value must be [key, value], got 3');
    expect(() => kvModel.input('write', ['x'])).toThrow(/\[key, value\]/);
  });
});

describe('kvModel with integers beyond 2^53', () => {
  it('keeps keys and values exact', () => {
    const big = 2n ** 53n;
    expect(kvModel.partitionKey!('write', [big + 1n, 1])).toBe(big + 1n);
    expect(describeCanonical(kvModel.partitionKey!('write', [[big + 1n], 1]))).toBe('[9007199254740993]');
    const state = kvModel.step(kvModel.init(), kvModel.input('write', ['k', big + 1n]), undefined)!;
    expect(
      kvModel.step(state, kvModel.input('read', ['k', null]), kvModel.output('read', ['k', big])),
    ).toBeUndefined();
    expect(() => kvModel.input('write', [big])).toThrow(
      'a kv value must be [key, value], got [9007199254740992]',
    );
  });
});
