import { describe, expect, it } from 'vitest';

import { counterModel } from '../../../src/check/models/counter.js';

describe('counterModel', () => {
  it('adds (by 1 when no value is given) and reads the count', () => {
    let state = counterModel.init();
    state = counterModel.step(state, counterModel.input('add', 5), undefined)!;
    state = counterModel.step(state, counterModel.input('increment', null), undefined)!;
    expect(state).toBe(6);
    expect(counterModel.step(state, counterModel.input('read', null), counterModel.output('read', 6))).toBe(
      6,
    );
    expect(
      counterModel.step(state, counterModel.input('read', null), counterModel.output('read', 5)),
    ).toBeUndefined();
  });

  it('says what it expects of a bad op', () => {
    expect(() => counterModel.input('add', 'x')).toThrow('a counter add must be a number, got "x"');
    expect(() => counterModel.input('write', 1)).toThrow(
      'model counter knows add, increment, read; got f=write',
    );
  });
});

describe('counterModel beyond 2^53', () => {
  it('refuses counts it cannot hold exactly, rather than rounding them', () => {
    expect(() => counterModel.input('add', 2n ** 53n + 1n)).toThrow(
      'a counter add must be a number, got 9007199254740993',
    );
    expect(() => counterModel.output('read', 2 ** 60)).toThrow(
      'a counter read must be within ±(2^53 - 1), got 1152921504606846976',
    );
  });
});
