import type { Op } from '../core/op.js';
import { pairOps } from '../core/op.js';
import { exactJson } from '../core/exact-json.js';
import { describePair, positionsOf } from './_internals/op-pairs.js';
import {
  type BankExplanation,
  explainWrongTotal,
  type TotalRead,
  type Transfer,
  transferOf,
} from './_internals/bank-explain.js';

export type { BankExplanation, Transfer, TransferPart } from './_internals/bank-explain.js';

/** At most this many wrong totals are explained (each a search over the transfers around it). */
const EXPLAINED = 20;

/**
 * What a bank read can show, as Jepsen's bank checker names it (checked in this order; a read is
 * reported under the first that applies): an account the bank does not have, an account missing
 * or without a balance, balances whose sum is not the bank's total, a negative balance.
 */
export const BANK_ERROR_TYPES = ['unexpected-key', 'nil-balance', 'wrong-total', 'negative-value'] as const;
export type BankErrorType = (typeof BANK_ERROR_TYPES)[number];

/** One read gone wrong, with the read (invocation, completion) that shows it. */
export interface BankError {
  readonly type: BankErrorType;
  readonly read: readonly [Op, Op];
  /** The balances it read, by account. */
  readonly balances: Readonly<Record<string, number | null>>;
  /** The sum of its balances (`wrong-total`, `negative-value`). */
  readonly total?: number;
  /** The accounts at fault: unexpected, missing or negative. */
  readonly accounts?: readonly string[];
  /**
   * `wrong-total`: the transfers that explain it (read skew, a lost transfer) or, failing that, the
   * ones in flight with the missing amount. Only the first reads with a wrong total get one.
   */
  readonly explanation?: BankExplanation;
  readonly message: string;
}

export interface BankCheckOptions {
  /** Every account of the bank (a read must hold each, and no other). */
  readonly accounts: readonly (string | number)[];
  /** What the balances of every read must sum to. */
  readonly total: number;
  /** Whether a negative balance is allowed (default false: it is a `negative-value` error). */
  readonly negativeBalances?: boolean;
}

export interface BankCheckResult {
  readonly valid: boolean;
  /** Acknowledged reads checked. */
  readonly reads: number;
  /** Transfers by outcome (`unknown`: never completed). */
  readonly transfers: {
    readonly ok: number;
    readonly fail: number;
    readonly info: number;
    readonly unknown: number;
  };
  /** Every read gone wrong, in the history's order. */
  readonly errors: readonly BankError[];
  readonly counts: Readonly<Record<BankErrorType, number>>;
}

function balancesOf(value: unknown, op: Op): Record<string, number | null> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`op ${op.index}: a bank read returns its balances by account, got ${exactJson(value)}`);
  }
  for (const [account, balance] of Object.entries(value)) {
    if (balance !== null && (typeof balance !== 'number' || !Number.isFinite(balance))) {
      throw new Error(
        `op ${op.index}: account ${exactJson(account)} has balance ${exactJson(balance)}, not a number`,
      );
    }
  }
  return value as Record<string, number | null>;
}

function accountList(accounts: readonly string[]): string {
  return accounts.map((a) => exactJson(a)).join(', ');
}

/**
 * Jepsen's bank check: every acknowledged read (`f: read`, its balances by account on `ok`) must
 * hold every account and no other, each with a balance, summing to the bank's total, none negative.
 * Transfers (`f: transfer`) are only counted: whatever they did shows in the reads. Throws on a read
 * value of the wrong shape.
 */
export function checkBank(ops: readonly Op[], options: BankCheckOptions): BankCheckResult {
  const accounts = options.accounts.map(String);
  const known = new Set(accounts);
  const transfers = { ok: 0, fail: 0, info: 0, unknown: 0 };
  const errors: BankError[] = [];
  const moves: Transfer[] = [];
  const totalReads: TotalRead[] = [];
  let reads = 0;
  for (const pair of pairOps(ops)) {
    const { invoke, completion } = pair;
    if (invoke.f === 'transfer') {
      transfers[completion === undefined || completion.type === 'invoke' ? 'unknown' : completion.type]++;
      const move = transferOf(pair);
      if (move !== undefined) moves.push(move);
      continue;
    }
    if (invoke.f !== 'read') {
      throw new Error(`op ${invoke.index}: a bank history has transfer and read ops, not ${invoke.f}`);
    }
    if (completion?.type !== 'ok') continue;
    reads++;
    const balances = balancesOf(completion.value, completion);
    const read = [invoke, completion] as const;
    const what = describePair(invoke, completion);
    const unexpected = Object.keys(balances).filter((a) => !known.has(a));
    if (unexpected.length > 0) {
      errors.push({
        type: 'unexpected-key',
        read,
        balances,
        accounts: unexpected,
        message: `${what} read account(s) ${accountList(unexpected)}, which the bank does not have`,
      });
      continue;
    }
    const missing = accounts.filter((a) => balances[a] === undefined || balances[a] === null);
    if (missing.length > 0) {
      errors.push({
        type: 'nil-balance',
        read,
        balances,
        accounts: missing,
        message: `${what} has no balance for account(s) ${accountList(missing)}`,
      });
      continue;
    }
    const total = accounts.reduce((sum, a) => sum + (balances[a] ?? 0), 0);
    totalReads.push({ pair, balances: balances as Record<string, number>, right: total === options.total });
    if (total !== options.total) {
      errors.push({
        type: 'wrong-total',
        read,
        balances,
        total,
        message: `wrong total ${total} (expected ${options.total}) in ${what}, balances ${exactJson(balances)}`,
      });
      continue;
    }
    const negative = accounts.filter((a) => (balances[a] ?? 0) < 0);
    if (negative.length > 0 && options.negativeBalances !== true) {
      errors.push({
        type: 'negative-value',
        read,
        balances,
        total,
        accounts: negative,
        message: `${what} read balances ${exactJson(balances)}: account(s) ${accountList(negative)} negative`,
      });
    }
  }
  const explained = explainWrongTotals(errors, totalReads, moves, ops, options.total, accounts);
  const counts = Object.fromEntries(
    BANK_ERROR_TYPES.map((type) => [type, errors.filter((e) => e.type === type).length]),
  ) as Record<BankErrorType, number>;
  return { valid: errors.length === 0, reads, transfers, errors: explained, counts };
}

/** The first `EXPLAINED` wrong totals with the transfers that explain them, named in their messages. */
function explainWrongTotals(
  errors: readonly BankError[],
  reads: readonly TotalRead[],
  transfers: readonly Transfer[],
  ops: readonly Op[],
  total: number,
  accounts: readonly string[],
): BankError[] {
  const position = positionsOf(ops);
  const opening = Object.fromEntries(accounts.map((a) => [a, total / accounts.length]));
  let left = EXPLAINED;
  return errors.map((error) => {
    if (error.type !== 'wrong-total' || left <= 0) return error;
    const read = reads.find((r) => r.pair.invoke === error.read[0]);
    if (read === undefined) return error;
    left--;
    const explanation = explainWrongTotal(read, reads, transfers, opening, position, total);
    return { ...error, explanation, message: `${error.message}: ${explanation.text}` };
  });
}
