import { describe, expect, it } from 'vitest';

import type { ParsedHistory } from '../../../src/check/history/parsed-history.js';
import { isMicroOpList, transactionalModel } from '../../../src/check/history/txn-model.js';
import type { Op } from '../../../src/core/op.js';

function parsed(...ops: [Op['type'], string, unknown][]): ParsedHistory {
  return {
    format: 'edn',
    ops: ops.map(([type, f, value], index) => ({ index, time: index, type, process: 0, f, value })),
    lines: ops.map((_, i) => i + 1),
  };
}

describe('transactionalModel', () => {
  it('picks list-append when a micro-op appends or a read returns a list', () => {
    expect(transactionalModel(parsed(['invoke', 'txn', [['append', 1, 2]]]))).toBe('list-append');
    expect(
      transactionalModel(parsed(['invoke', 'txn', [['r', 1, null]]], ['ok', 'txn', [['r', 1, [2]]]])),
    ).toBe('list-append');
  });

  it('picks rw-register for r and w micro-ops, under f txn or any other f', () => {
    expect(transactionalModel(parsed(['invoke', 'txn', [['w', 'x', 1]]]))).toBe('rw-register');
    expect(
      transactionalModel(parsed(['invoke', 'write', [['w', 1, 2]]], ['ok', 'read', [['r', 1, 2]]])),
    ).toBe('rw-register');
  });

  it('calls a history with f txn transactional whatever its values, and register ops not', () => {
    expect(transactionalModel(parsed(['invoke', 'txn', 3]))).toBe('rw-register');
    expect(transactionalModel(parsed(['invoke', 'write', 3], ['ok', 'read', [1, 2]]))).toBeUndefined();
    expect(transactionalModel(parsed(['invoke', 'write', ['k', 1]]))).toBeUndefined();
  });

  it('skips nemesis ops', () => {
    const history = parsed(['info', 'start', [['w', 1, 2]]]);
    const nemesis = { ...history, ops: history.ops.map((op) => ({ ...op, process: 'nemesis' as const })) };
    expect(transactionalModel(nemesis)).toBeUndefined();
  });
});

describe('isMicroOpList', () => {
  it('takes non-empty lists of [f, k, v] with f append, r or w', () => {
    expect(isMicroOpList([['r', 1, null]])).toBe(true);
    expect(isMicroOpList([])).toBe(false);
    expect(isMicroOpList([['cas', 1, 2]])).toBe(false);
    expect(isMicroOpList([['r', 1]])).toBe(false);
    expect(isMicroOpList(['x', [1, 2]])).toBe(false);
  });
});
