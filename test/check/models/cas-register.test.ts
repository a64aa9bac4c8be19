import { describe, expect, it } from 'vitest';

import { casRegisterModel, registerModel } from '../../../src/check/models/cas-register.js';

const m = casRegisterModel;

describe('casRegisterModel', () => {
  it('starts as nil, and a read of nil is a read of the initial value', () => {
    const state = m.init();
    expect(m.describe(state)).toBe('nil');
    expect(m.step(state, m.input('read', null), m.output('read', null))).toBe(state);
    expect(m.step(state, m.input('read', null), m.output('read', 0))).toBeUndefined();
  });

  it('writes, reads back, and compares-and-sets only from the expected value', () => {
    const written = m.step(m.init(), m.input('write', 3), m.output('write', 3))!;
    expect(m.step(written, m.input('read', null), m.output('read', 3))).toBe(written);
    expect(m.step(written, m.input('cas', [3, 4]), m.output('cas', [3, 4]))).toBe(4);
    expect(m.step(written, m.input('cas', [2, 4]), m.output('cas', [2, 4]))).toBeUndefined();
  });

  it('lets an info op take effect when it can (any read, any write, a cas from the expected value)', () => {
    expect(m.step(5, m.input('read', null), undefined)).toBe(5);
    expect(m.step(5, m.input('write', 1), undefined)).toBe(1);
    expect(m.step(5, m.input('cas', [5, 6]), undefined)).toBe(6);
    expect(m.step(5, m.input('cas', [4, 6]), undefined)).toBeUndefined();
  });

  it('says the one state an op needs and the states it can enter, as the search prunes by', () => {
    const need = (f: string, value: unknown, output?: unknown): unknown =>
      m.onlyStateFor!(m.input(f, value), output === undefined ? undefined : m.output(f, output));
    expect(need('read', null, 3)).toBe(3);
    expect(need('read', null)).toBeUndefined();
    expect(need('write', 3, 3)).toBeUndefined();
    expect(need('cas', [3, 4], [3, 4])).toBe(3);
    expect(need('cas', [3, 4])).toBe(3);
    expect(m.statesEntered!(m.input('read', null))).toEqual([]);
    expect(m.statesEntered!(m.input('write', 3))).toEqual([3]);
    expect(m.statesEntered!(m.input('cas', [3, 4]))).toEqual([4]);
  });

  it('compares structured values by content', () => {
    const state = m.step(m.init(), m.input('write', { a: [1, 2] }), undefined)!;
    expect(m.step(state, m.input('read', null), m.output('read', { a: [1, 2] }))).toBe(state);
    expect(m.describe(state)).toBe('{"a" [1 2]}');
    expect(m.equal(state, m.step(m.init(), m.input('write', { a: [1, 2] }), undefined)!)).toBe(true);
    expect(m.hash(state)).toBe(m.hash(m.step(m.init(), m.input('write', { a: [1, 2] }), undefined)!));
  });

  it('says what it expects of a malformed cas or an unknown f', () => {
    expect(() => m.input('cas', 3)).toThrow('a cas value must be [old, new], got 3');
    expect(() => m.input('append', 3)).toThrow('model cas-register knows read, write, cas; got f=append');
    expect(() => registerModel.input('cas', [1, 2])).toThrow(/--model cas-register/);
  });
});

describe('casRegisterModel with integers beyond 2^53', () => {
  it('reads, writes and compares-and-sets them exactly', () => {
    const big = 2n ** 53n;
    const written = m.step(m.init(), m.input('write', big + 1n), undefined)!;
    expect(m.describe(written)).toBe('9007199254740993');
    expect(m.step(written, m.input('read', null), m.output('read', big))).toBeUndefined();
    expect(m.step(written, m.input('cas', [big, 1]), undefined)).toBeUndefined();
    expect(m.step(written, m.input('cas', [big + 1n, 1]), undefined)).toBe(1);
    expect(() => m.input('cas', [big])).toThrow('a cas value must be [old, new], got [9007199254740992]');
  });
});
