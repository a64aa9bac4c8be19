import { describe, expect, it } from 'vitest';

import type { StoredValue } from '../../../src/systems/kvraft/_internals/messages.js';
import { applyTxn, readRegister } from '../../../src/systems/kvraft/_internals/state-machine.js';

describe('kvraft transactions in the state machine', () => {
  it('appends to lists (a missing key is empty) and reads them, own appends included', () => {
    const kv = new Map<string, StoredValue>([['x', [1]]]);
    const reply = applyTxn(kv, [
      ['r', 'x', null],
      ['append', 'x', 2],
      ['append', 'y', 1],
      ['r', 'x', null],
      ['r', 'y', null],
      ['r', 'z', null],
    ]);
    expect(reply).toEqual({
      ok: true,
      txn: [
        ['r', 'x', [1]],
        ['append', 'x', 2],
        ['append', 'y', 1],
        ['r', 'x', [1, 2]],
        ['r', 'y', [1]],
        ['r', 'z', null],
      ],
    });
    expect(kv).toEqual(
      new Map([
        ['x', [1, 2]],
        ['y', [1]],
      ]),
    );
  });

  it('writes and reads registers', () => {
    const kv = new Map<string, StoredValue>();
    expect(
      applyTxn(kv, [
        ['r', 'a', null],
        ['w', 'a', 5],
        ['r', 'a', null],
        ['w', 'a', 6],
      ]),
    ).toEqual({
      ok: true,
      txn: [
        ['r', 'a', null],
        ['w', 'a', 5],
        ['r', 'a', 5],
        ['w', 'a', 6],
      ],
    });
    expect(kv.get('a')).toBe(6);
  });

  it('applies a guarded transaction only when every key of its guard holds its value (null: nothing)', () => {
    const kv = new Map<string, StoredValue>([['a', 20]]);
    expect(
      applyTxn(
        kv,
        [
          ['w', 'a', 15],
          ['w', 'b', 25],
        ],
        [
          ['a', 20],
          ['b', null],
        ],
      ),
    ).toEqual({
      ok: true,
      txn: [
        ['w', 'a', 15],
        ['w', 'b', 25],
      ],
    });
    expect(
      applyTxn(
        kv,
        [
          ['w', 'a', 10],
          ['w', 'b', 30],
        ],
        [
          ['a', 20],
          ['b', 25],
        ],
      ),
    ).toEqual({ ok: false, definite: true, error: 'guard not met: key "a" holds 15, not 20' });
    expect(kv).toEqual(
      new Map([
        ['a', 15],
        ['b', 25],
      ]),
    );
  });

  it('does not change a list a reply already carries', () => {
    const kv = new Map<string, StoredValue>([['x', [1]]]);
    const first = applyTxn(kv, [['r', 'x', null]]);
    applyTxn(kv, [['append', 'x', 2]]);
    expect(first).toEqual({ ok: true, txn: [['r', 'x', [1]]] });
  });

  it('refuses the whole transaction, changing nothing, when an append meets a register', () => {
    const kv = new Map<string, StoredValue>([['r', 1]]);
    const reply = applyTxn(kv, [
      ['append', 'x', 1],
      ['w', 'y', 2],
      ['append', 'r', 3],
    ]);
    expect(reply).toEqual({ ok: false, definite: true, error: 'append on key "r", which holds a register' });
    expect(kv).toEqual(new Map([['r', 1]]));
  });

  it('refuses a write to a key the same transaction made a list', () => {
    const kv = new Map<string, StoredValue>();
    const reply = applyTxn(kv, [
      ['append', 'x', 1],
      ['w', 'x', 2],
    ]);
    expect(reply).toMatchObject({ ok: false, definite: true, error: 'w on key "x", which holds a list' });
    expect(kv.size).toBe(0);
  });

  it('register reads refuse a list', () => {
    const kv = new Map<string, StoredValue>([
      ['l', [1]],
      ['r', 3],
    ]);
    expect(readRegister(kv, 'r')).toEqual({ ok: true, value: 3 });
    expect(readRegister(kv, 'none')).toEqual({ ok: true, value: null });
    expect(readRegister(kv, 'l')).toMatchObject({ ok: false, definite: true });
  });
});
