import type { Op, OpPair } from '../../core/op.js';
import { describePair } from './op-pairs.js';

/** At most this many transfers are searched for an explanation (4 ways each: none, whole, debit, credit). */
const MAX_CANDIDATES = 12;
/** At most this many half-applied transfers in an explanation. */
const MAX_PARTS = 2;

/** A transfer as the history has it: `{from, to, amount}` on the invocation. */
export interface Transfer {
  readonly pair: OpPair;
  readonly from: string;
  readonly to: string;
  readonly amount: number;
}

/** What half of a transfer a read saw: only its debit (money gone) or only its credit (money made). */
export interface TransferPart {
  readonly transfer: Transfer;
  readonly part: 'debit' | 'credit';
}

/**
 * Why a read's total is wrong, as far as the history tells:
 * - `read-skew`: the read saw part of a transfer (its debit but not its credit, or the reverse),
 *   and a later read saw the right total again — the read was not of one consistent state;
 * - `lost-credit` / `lost-debit`: the same, but no later read saw the right total: the transfer's
 *   other half was lost (money destroyed) or applied without its debit (money created) for good;
 * - `unexplained`: no transfer, whole or half, between the last good read and this one accounts
 *   for the balances; `suspects` are the transfers in flight whose amount matches the difference.
 */
export interface BankExplanation {
  readonly anomaly: 'read-skew' | 'lost-credit' | 'lost-debit' | 'unexplained';
  /** The half-applied transfers (empty when unexplained). */
  readonly parts: readonly TransferPart[];
  /** The transfers seen whole between the base and this read. */
  readonly whole: readonly Transfer[];
  /** The read with the right total it is compared with (undefined: the opening balances). */
  readonly base?: OpPair;
  /** Transfers in flight whose amount is the difference (`unexplained` only). */
  readonly suspects: readonly Transfer[];
  /** The sentence the finding's message carries. */
  readonly text: string;
}

/** `process 4's transfer 3→1 of 5 (op 38, ok at op 40 on n2)`. */
export function describeTransfer(t: Transfer): string {
  const { invoke, completion } = t.pair;
  const node = (completion ?? invoke).node;
  const outcome =
    completion === undefined ? 'never completed' : `${completion.type} at op ${completion.index}`;
  return `process ${String(invoke.process)}'s transfer ${t.from}→${t.to} of ${t.amount} (op ${invoke.index}, ${outcome}${node === undefined ? '' : ` on ${node}`})`;
}

/** The transfer an invocation names, or undefined when its value is not `{from, to, amount}`. */
export function transferOf(pair: OpPair): Transfer | undefined {
  const v = pair.invoke.value as { from?: unknown; to?: unknown; amount?: unknown } | null;
  if (v === null || typeof v !== 'object') return undefined;
  if (typeof v.amount !== 'number' || (typeof v.from !== 'number' && typeof v.from !== 'string'))
    return undefined;
  if (typeof v.to !== 'number' && typeof v.to !== 'string') return undefined;
  return { pair, from: String(v.from), to: String(v.to), amount: v.amount };
}

type Balances = Readonly<Record<string, number>>;

function add(delta: Record<string, number>, account: string, amount: number): void {
  delta[account] = (delta[account] ?? 0) + amount;
}

function isZero(delta: Readonly<Record<string, number>>): boolean {
  return Object.values(delta).every((v) => v === 0);
}

/** A subset of `pool` whose whole transfers move exactly `delta`, or undefined. */
function wholeSubset(pool: readonly Transfer[], delta: Record<string, number>): Transfer[] | undefined {
  const n = pool.length;
  for (let mask = 0; mask < 1 << n; mask++) {
    const d = { ...delta };
    const chosen: Transfer[] = [];
    for (let i = 0; i < n; i++) {
      if ((mask & (1 << i)) === 0) continue;
      const t = pool[i];
      add(d, t.from, t.amount);
      add(d, t.to, -t.amount);
      chosen.push(t);
    }
    if (isZero(d)) return chosen;
  }
  return undefined;
}

/** Every way to pick `k` of `items` (in order). */
function* choose<T>(items: readonly T[], k: number, from = 0): Generator<T[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = from; i <= items.length - k; i++) {
    for (const rest of choose(items, k - 1, i + 1)) yield [items[i], ...rest];
  }
}

/**
 * The fewest half-applied transfers (and a set of whole ones) that turn `base` into `seen`, or
 * undefined when none of at most `MAX_PARTS` halves does.
 */
function search(
  candidates: readonly Transfer[],
  base: Balances,
  seen: Balances,
): { parts: TransferPart[]; whole: Transfer[] } | undefined {
  const delta: Record<string, number> = {};
  for (const a of Object.keys(seen)) delta[a] = seen[a] - (base[a] ?? 0);
  const totalDelta = Object.values(delta).reduce((s, v) => s + v, 0);
  for (let k = 1; k <= MAX_PARTS; k++) {
    for (const halves of choose(candidates, k)) {
      for (let sides = 0; sides < 1 << k; sides++) {
        const parts = halves.map((transfer, i): TransferPart => ({
          transfer,
          part: (sides & (1 << i)) === 0 ? 'debit' : 'credit',
        }));
        const moved = parts.reduce(
          (s, p) => s + (p.part === 'debit' ? -p.transfer.amount : p.transfer.amount),
          0,
        );
        if (moved !== totalDelta) continue;
        const rest = { ...delta };
        for (const p of parts) {
          if (p.part === 'debit') add(rest, p.transfer.from, p.transfer.amount);
          else add(rest, p.transfer.to, -p.transfer.amount);
        }
        const whole = wholeSubset(
          candidates.filter((t) => !halves.includes(t)),
          rest,
        );
        if (whole !== undefined) return { parts, whole };
      }
    }
  }
  return undefined;
}

function describePart(p: TransferPart): string {
  return p.part === 'debit'
    ? `${describeTransfer(p.transfer)}'s debit but not its credit`
    : `${describeTransfer(p.transfer)}'s credit but not its debit`;
}

/** What is known of the reads that check the total: each good or wrong, in the history's order. */
export interface TotalRead {
  readonly pair: OpPair;
  readonly balances: Balances;
  readonly right: boolean;
}

/**
 * Explains a read whose total is wrong by the transfers that could have moved money between the
 * last read with the right total that completed before it began (or the opening balances) and it:
 * those not certainly failed, invoked before it completed, and not completed before the base began.
 */
export function explainWrongTotal(
  read: TotalRead,
  reads: readonly TotalRead[],
  transfers: readonly Transfer[],
  opening: Balances,
  position: ReadonlyMap<Op, number>,
  expected: number,
): BankExplanation {
  const at = (op: Op | undefined): number => (op === undefined ? Infinity : (position.get(op) ?? Infinity));
  const begins = at(read.pair.invoke);
  const ends = at(read.pair.completion);
  const base = [...reads].reverse().find((r) => r.right && at(r.pair.completion) < begins);
  const baseBegins = base === undefined ? -1 : at(base.pair.invoke);
  const candidates = transfers.filter(
    (t) =>
      t.pair.completion?.type !== 'fail' && at(t.pair.invoke) < ends && at(t.pair.completion) > baseBegins,
  );
  const total = Object.values(read.balances).reduce((s, v) => s + v, 0);
  const difference = total - expected;
  const against =
    base === undefined
      ? 'against the opening balances'
      : `against the last read with the right total, ${describePair(base.pair.invoke, base.pair.completion)}`;
  const found =
    candidates.length <= MAX_CANDIDATES
      ? search(candidates, base?.balances ?? opening, read.balances)
      : undefined;
  if (found === undefined) {
    const suspects = candidates.filter((t) => t.amount === Math.abs(difference));
    const named =
      suspects.length > 0 ? `; in flight with that amount: ${suspects.map(describeTransfer).join(', ')}` : '';
    return {
      anomaly: 'unexplained',
      parts: [],
      whole: [],
      ...(base !== undefined ? { base: base.pair } : {}),
      suspects,
      text: `unexplained: ${Math.abs(difference)} ${difference < 0 ? 'missing' : 'too much'}, which no ${candidates.length > MAX_CANDIDATES ? `search of the ${candidates.length} transfers in flight` : `transfer in flight, whole or half,`} explains ${against}${named}`,
    };
  }
  const healed = reads.some((r) => r.right && at(r.pair.invoke) > ends);
  const anomaly = healed ? 'read-skew' : difference < 0 ? 'lost-credit' : 'lost-debit';
  const saw = `it saw ${found.parts.map(describePart).join(', and ')}`;
  const what =
    anomaly === 'read-skew'
      ? `read skew: ${saw} (later reads saw the right total again)`
      : anomaly === 'lost-credit'
        ? `lost transfer: ${saw}, and no later read saw the right total again (money destroyed)`
        : `money created: ${saw}, and no later read saw the right total again`;
  return {
    anomaly,
    parts: found.parts,
    whole: found.whole,
    ...(base !== undefined ? { base: base.pair } : {}),
    suspects: [],
    text: `${what}, ${against}`,
  };
}
