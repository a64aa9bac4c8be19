import { describe, expect, it } from 'vitest';

import {
  canonical,
  canonicalKey,
  describeCanonical,
  hashCanonical,
} from '../../../src/check/models/value.js';

const TWO_53 = 2n ** 53n;

describe('canonical', () => {
  it('keeps integers beyond 2^53 exact, so neighbours differ', () => {
    expect(canonical(TWO_53 + 1n)).not.toBe(canonical(TWO_53));
    expect(canonical([TWO_53 + 1n])).not.toBe(canonical([TWO_53]));
    expect(canonical({ v: TWO_53 + 1n })).not.toBe(canonical({ v: TWO_53 }));
  });

  it('gives an integer one form whether it came as a number or a bigint', () => {
    expect(canonical(5n)).toBe(5);
    expect(canonical(2 ** 60)).toBe(2n ** 60n);
    expect(canonical([2 ** 60, 5n])).toBe(canonical([2n ** 60n, 5]));
    expect(hashCanonical(canonical(2 ** 60))).toBe(hashCanonical(canonical(2n ** 60n)));
  });

  it('tells a big integer from the string of its digits, and describes it as digits', () => {
    expect(canonical(TWO_53 + 1n)).not.toBe(canonical('9007199254740993'));
    expect(canonical([TWO_53 + 1n])).not.toBe(canonical(['9007199254740993']));
    expect(describeCanonical(canonical(TWO_53 + 1n))).toBe('9007199254740993');
    expect(describeCanonical(canonical([TWO_53 + 1n, 'a']))).toBe('[9007199254740993 "a"]');
  });
});

describe('canonicalKey', () => {
  it('keeps keys that differ beyond 2^53 apart, and one form per integer', () => {
    expect(canonicalKey(TWO_53 + 1n)).not.toBe(canonicalKey(TWO_53));
    expect(canonicalKey(7n)).toBe(7);
    expect(describeCanonical(canonicalKey(['k', TWO_53 + 1n]))).toBe('["k" 9007199254740993]');
    expect(canonicalKey(['k', TWO_53 + 1n])).toBe(canonicalKey(['k', 9007199254740993n]));
  });
});
