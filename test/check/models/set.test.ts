import { describe, expect, it } from 'vitest';

import { setModel } from '../../../src/check/models/set.js';

describe('setModel', () => {
  it('adds elements once and reads the whole set in any order', () => {
    let state = setModel.init();
    for (const e of [2, 'a', 2]) state = setModel.step(state, setModel.input('add', e), undefined)!;
    expect(setModel.describe(state)).toBe('#{"a" 2}');
    expect(setModel.step(state, setModel.input('read', null), setModel.output('read', [2, 'a', 2]))).toBe(
      state,
    );
    expect(setModel.step(state, setModel.input('read', null), setModel.output('read', [2]))).toBeUndefined();
  });

  it('refuses a read that is not a list', () => {
    expect(() => setModel.output('read', 3)).toThrow('a set read must return a list of elements, got 3');
  });
});

describe('setModel with integers beyond 2^53', () => {
  it('tells elements apart that differ beyond 2^53', () => {
    const big = 2n ** 53n;
    const state = setModel.step(setModel.init(), setModel.input('add', big + 1n), undefined)!;
    expect(setModel.describe(state)).toBe('#{9007199254740993}');
    expect(
      setModel.step(state, setModel.input('read', null), setModel.output('read', [big])),
    ).toBeUndefined();
    expect(setModel.step(state, setModel.input('read', null), setModel.output('read', [big + 1n]))).toBe(
      state,
    );
  });
});
