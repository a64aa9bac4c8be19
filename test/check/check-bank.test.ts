import { describe, expect, it } from 'vitest';

import { checkBank } from '../../src/check/check-bank.js';
import type { Op } from '../../src/core/op.js';

function history(...lines: [number, Op['type'], string, unknown][]): Op[] {
  return lines.map(([process, type, f, value], index) => ({ index, time: index, type, process, f, value }));
}

const BANK = { accounts: [0, 1, 2], total: 30 };

describe('checkBank', () => {
  it('passes a history whose reads all conserve the total, whatever the transfers did', () => {
    const ops = history(
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', { 0: 10, 1: 10, 2: 10 }],
      [1, 'invoke', 'transfer', { from: 0, to: 1, amount: 4 }],
      [1, 'ok', 'transfer', { from: 0, to: 1, amount: 4 }],
      [1, 'invoke', 'transfer', { from: 0, to: 2, amount: 9 }],
      [1, 'fail', 'transfer', { from: 0, to: 2, amount: 9 }],
      [2, 'invoke', 'transfer', { from: 2, to: 0, amount: 3 }],
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', { 0: 6, 1: 14, 2: 10 }],
      [2, 'info', 'transfer', { from: 2, to: 0, amount: 3 }],
      [0, 'invoke', 'read', null],
      [0, 'fail', 'read', null],
      [3, 'invoke', 'transfer', { from: 1, to: 2, amount: 1 }],
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', { 0: 9, 1: 14, 2: 7 }],
    );
    expect(checkBank(ops, BANK)).toEqual({
      valid: true,
      reads: 3,
      transfers: { ok: 1, fail: 1, info: 1, unknown: 1 },
      errors: [],
      counts: { 'unexpected-key': 0, 'nil-balance': 0, 'wrong-total': 0, 'negative-value': 0 },
    });
  });

  it('reports a read whose balances do not sum to the total, with its ops and the sum', () => {
    const ops = history(
      [0, 'invoke', 'transfer', { from: 0, to: 1, amount: 5 }],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 5, 1: 10, 2: 10 }],
      [0, 'ok', 'transfer', { from: 0, to: 1, amount: 5 }],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 5, 1: 15, 2: 10 }],
    );
    const result = checkBank(ops, BANK);
    expect(result.valid).toBe(false);
    expect(result.counts['wrong-total']).toBe(1);
    expect(result.errors).toHaveLength(1);
    const [error] = result.errors;
    expect(error).toMatchObject({ type: 'wrong-total', total: 25, read: [ops[1], ops[2]] });
    expect(error.message).toBe(
      `wrong total 25 (expected 30) in process 1's read (op 1, ok at op 2), balances {"0":5,"1":10,"2":10}: ` +
        "read skew: it saw process 0's transfer 0→1 of 5 (op 0, ok at op 3)'s debit but not its credit " +
        '(later reads saw the right total again), against the opening balances',
    );
    expect(error.explanation).toMatchObject({
      anomaly: 'read-skew',
      parts: [{ part: 'debit', transfer: { from: '0', to: '1', amount: 5 } }],
      whole: [],
    });
  });

  it('names a transfer whose credit was lost for good, against the last read with the right total', () => {
    const ops = history(
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 10, 1: 10, 2: 10 }],
      [0, 'invoke', 'transfer', { from: 2, to: 0, amount: 3 }],
      [0, 'ok', 'transfer', { from: 2, to: 0, amount: 3 }],
      [0, 'invoke', 'transfer', { from: 0, to: 1, amount: 4 }],
      [0, 'info', 'transfer', { from: 0, to: 1, amount: 4 }],
      [2, 'invoke', 'transfer', { from: 1, to: 2, amount: 9 }],
      [2, 'fail', 'transfer', { from: 1, to: 2, amount: 9 }],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 9, 1: 10, 2: 7 }],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 9, 1: 10, 2: 7 }],
    );
    const [first, second] = checkBank(ops, BANK).errors;
    expect(first.explanation).toMatchObject({
      anomaly: 'lost-credit',
      parts: [{ part: 'debit', transfer: { from: '0', to: '1', amount: 4 } }],
      whole: [{ from: '2', to: '0', amount: 3 }],
      base: { invoke: ops[0], completion: ops[1] },
    });
    expect(first.message).toBe(
      `wrong total 26 (expected 30) in process 1's read (op 8, ok at op 9), balances {"0":9,"1":10,"2":7}: ` +
        "lost transfer: it saw process 0's transfer 0→1 of 4 (op 4, info at op 5)'s debit but not its credit, " +
        "and no later read saw the right total again (money destroyed), against the last read with the right total, process 1's read (op 0, ok at op 1)",
    );
    expect(second.explanation?.anomaly).toBe('lost-credit');
  });

  it('a wrong total no transfer explains is said so, naming the transfers in flight with that amount', () => {
    const ops = history(
      [0, 'invoke', 'transfer', { from: 0, to: 1, amount: 2 }],
      [0, 'ok', 'transfer', { from: 0, to: 1, amount: 2 }],
      [2, 'invoke', 'transfer', { from: 2, to: 1, amount: 3 }],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 8, 1: 9, 2: 10 }],
    );
    const [error] = checkBank(ops, BANK).errors;
    expect(error.explanation).toMatchObject({
      anomaly: 'unexplained',
      suspects: [{ from: '2', to: '1', amount: 3 }],
    });
    expect(error.message).toMatch(
      /: unexplained: 3 missing, which no transfer in flight, whole or half, explains against the opening balances; in flight with that amount: process 2's transfer 2→1 of 3 \(op 2, never completed\)$/,
    );
  });

  it('reports a negative balance even when the total is right', () => {
    const ops = history([0, 'invoke', 'read', null], [0, 'ok', 'read', { 0: -2, 1: 22, 2: 10 }]);
    const result = checkBank(ops, BANK);
    expect(result.valid).toBe(false);
    expect(result.counts).toEqual({
      'unexpected-key': 0,
      'nil-balance': 0,
      'wrong-total': 0,
      'negative-value': 1,
    });
    expect(result.errors[0]).toMatchObject({ type: 'negative-value', accounts: ['0'], total: 30 });
    expect(result.errors[0].message).toMatch(/account\(s\) "0" negative$/);
    expect(checkBank(ops, { ...BANK, negativeBalances: true }).valid).toBe(true);
  });

  it('reports a read missing an account (absent or null) as nil-balance, not as a wrong total', () => {
    const ops = history(
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', { 0: 10, 2: 20 }],
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', { 0: 10, 1: null, 2: 20 }],
    );
    const result = checkBank(ops, BANK);
    expect(result.counts).toEqual({
      'unexpected-key': 0,
      'nil-balance': 2,
      'wrong-total': 0,
      'negative-value': 0,
    });
    expect(result.errors.map((e) => [e.type, e.accounts, e.read[1].index])).toEqual([
      ['nil-balance', ['1'], 1],
      ['nil-balance', ['1'], 3],
    ]);
    expect(result.errors[0].message).toBe(
      `process 0's read (op 0, ok at op 1) has no balance for account(s) "1"`,
    );
  });

  it('reports an account the bank does not have', () => {
    const ops = history([0, 'invoke', 'read', null], [0, 'ok', 'read', { 0: 10, 1: 10, 2: 10, 7: 0 }]);
    const result = checkBank(ops, BANK);
    expect(result.errors).toMatchObject([{ type: 'unexpected-key', accounts: ['7'] }]);
  });

  it('counts every bad read, in the history order, and ignores reads that did not complete ok', () => {
    const ops = history(
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', { 0: 10, 1: 10, 2: 11 }],
      [0, 'invoke', 'read', null],
      [0, 'info', 'read', null],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', { 0: 10, 1: 10, 2: 9 }],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', { 0: 10, 1: 10, 2: 10 }],
    );
    const result = checkBank(ops, BANK);
    expect(result.reads).toBe(3);
    expect(result.counts['wrong-total']).toBe(2);
    expect(result.errors.map((e) => e.total)).toEqual([31, 29]);
  });

  it('throws on a history that is not a bank’s', () => {
    expect(() =>
      checkBank(history([0, 'invoke', 'read', null], [0, 'ok', 'read', [10, 10, 10]]), BANK),
    ).toThrow(/op 1: a bank read returns its balances by account/);
    expect(() =>
      checkBank(history([0, 'invoke', 'read', null], [0, 'ok', 'read', { 0: '10' }]), BANK),
    ).toThrow(/account "0" has balance "10"/);
    expect(() => checkBank(history([0, 'invoke', 'add', 1]), BANK)).toThrow(/not add/);
  });
});
