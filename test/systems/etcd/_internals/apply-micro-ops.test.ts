import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { applyMicroOps } from '../../../../src/systems/etcd/_internals/apply-micro-ops.js';
import type { TxnValue } from '../../../../src/systems/etcd/_internals/txn-value.js';
import type {
  MicroOp as KvraftMicroOp,
  StoredValue,
} from '../../../../src/systems/kvraft/_internals/messages.js';
import { applyTxn } from '../../../../src/systems/kvraft/_internals/state-machine.js';

describe('etcd transactions applied on a snapshot', () => {
  it('appends to lists and reads them, own appends included; absent keys read null', () => {
    const snapshot = new Map<string, TxnValue>([['x', [1]]]);
    const applied = applyMicroOps(snapshot, [
      ['r', 'x', null],
      ['append', 'x', 2],
      ['append', 'y', 1],
      ['r', 'x', null],
      ['r', 'y', null],
      ['r', 'z', null],
      ['append', 'x', 3],
    ]);
    expect(applied).toEqual({
      ok: true,
      results: [
        ['r', 'x', [1]],
        ['append', 'x', 2],
        ['append', 'y', 1],
        ['r', 'x', [1, 2]],
        ['r', 'y', [1]],
        ['r', 'z', null],
        ['append', 'x', 3],
      ],
      writes: new Map([
        ['x', [1, 2, 3]],
        ['y', [1]],
      ]),
    });
    expect(snapshot).toEqual(new Map([['x', [1]]]));
  });

  it('reads a register as the transaction last wrote it, and writes each key once', () => {
    const applied = applyMicroOps(new Map([['a', 5]]), [
      ['r', 'a', null],
      ['w', 'a', 6],
      ['w', 'a', 7],
      ['r', 'a', null],
    ]);
    expect(applied).toEqual({
      ok: true,
      results: [
        ['r', 'a', 5],
        ['w', 'a', 6],
        ['w', 'a', 7],
        ['r', 'a', 7],
      ],
      writes: new Map([['a', 7]]),
    });
  });

  it('a read-only transaction writes nothing', () => {
    expect(applyMicroOps(new Map([['a', 1]]), [['r', 'a', null]])).toMatchObject({ writes: new Map() });
  });

  it('refuses an append to a register and a write over a list', () => {
    expect(applyMicroOps(new Map([['a', 1]]), [['append', 'a', 2]])).toEqual({
      ok: false,
      error: 'append on key "a", which holds a register',
    });
    expect(
      applyMicroOps(new Map(), [
        ['append', 'l', 1],
        ['w', 'l', 2],
      ]),
    ).toEqual({
      ok: false,
      error: 'w on key "l", which holds a list',
    });
  });

  it('agrees with kvraft, whose state machine applies the same micro-ops in place', () => {
    const key = fc.constantFrom('a', 'b', 'c');
    const value = fc.integer({ min: 0, max: 9 });
    const stored: fc.Arbitrary<TxnValue> = fc.oneof(value, fc.array(value, { maxLength: 3 }));
    const op: fc.Arbitrary<KvraftMicroOp> = fc.oneof(
      fc.tuple(fc.constant('r' as const), key, fc.constant(null)),
      fc.tuple(fc.constant('append' as const), key, value),
      fc.tuple(fc.constant('w' as const), key, value),
    );
    fc.assert(
      fc.property(fc.dictionary(key, stored), fc.array(op, { minLength: 1, maxLength: 6 }), (held, ops) => {
        const snapshot = new Map(Object.entries(held));
        const kv = new Map<string, StoredValue>(snapshot);
        const kvraft = applyTxn(kv, ops);
        const applied = applyMicroOps(snapshot, ops);
        if (!applied.ok) {
          expect(kvraft).toMatchObject({ ok: false, error: applied.error });
          return;
        }
        expect(kvraft).toEqual({ ok: true, txn: applied.results });
        expect(kv).toEqual(new Map([...snapshot, ...applied.writes]));
      }),
    );
  });
});
