import type { Op } from '../core/op.js';
import { pairOps } from '../core/op.js';
import { exactJson } from '../core/exact-json.js';
import { completedValue, describePair, opKey, positionsOf } from './_internals/op-pairs.js';

/** A read outside what the adds around it allow. */
export interface CounterViolation {
  /** The counter's key; `undefined` for a history of one counter with bare values. */
  readonly key: unknown;
  readonly value: number;
  /** The sum of the adds acknowledged before the read began. */
  readonly lower: number;
  /** The sum of every add (acknowledged or of unknown outcome) invoked before the read ended. */
  readonly upper: number;
  /** The read's invocation and completion. */
  readonly read: readonly [Op, Op];
  readonly message: string;
}

export interface CounterCheckResult {
  readonly valid: boolean;
  readonly keys: number;
  readonly adds: number;
  readonly reads: number;
  readonly violations: readonly CounterViolation[];
}

interface Bound {
  readonly position: number;
  readonly delta: number;
}

interface KeyOps {
  /** Acknowledged adds, by the position of their completion. */
  readonly acknowledged: Bound[];
  /** Adds that may have happened (ok, info, never completed), by the position of their invocation. */
  readonly attempted: Bound[];
  readonly reads: { invoke: Op; completion: Op; start: number; end: number; value: number }[];
}

/** The sum of the deltas at positions before `position` (`bounds` sorted by position). */
function sumBefore(bounds: readonly Bound[], prefix: readonly number[], position: number): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid].position < position) lo = mid + 1;
    else hi = mid;
  }
  return prefix[lo];
}

function prefixSums(bounds: readonly Bound[]): number[] {
  const sums = [0];
  for (const b of bounds) sums.push(sums[sums.length - 1] + b.delta);
  return sums;
}

function number(value: unknown, what: string, op: Op): number {
  if (value === null || value === undefined) return what === 'add' ? 1 : 0;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`op ${op.index}: a counter ${what} needs a number, got ${exactJson(value)}`);
  }
  return value;
}

/**
 * Jepsen's counter check: every acknowledged read must lie between the sum of the adds
 * acknowledged before it began and the sum of every add that may have taken effect (acknowledged,
 * or of unknown outcome) invoked before it ended. Failed adds did not happen. Ops are `add` (value
 * the delta, default 1) and `read` (the count on `ok`, `null` for 0), keyed as `[key, v]` when
 * the history has several counters. The order is the history's order. Throws on a value of the
 * wrong shape.
 */
export function checkCounter(ops: readonly Op[]): CounterCheckResult {
  const positions = positionsOf(ops);
  const byKey = new Map<string, { key: unknown; ops: KeyOps }>();
  const keyOps = (invoke: Op): { key: unknown; v: unknown; keyed: boolean; ops: KeyOps } => {
    const { key, v, id, keyed } = opKey(invoke);
    let entry = byKey.get(id);
    if (entry === undefined) {
      entry = { key, ops: { acknowledged: [], attempted: [], reads: [] } };
      byKey.set(id, entry);
    }
    return { key, v, keyed, ops: entry.ops };
  };
  let adds = 0;
  let reads = 0;
  for (const { invoke, completion } of pairOps(ops)) {
    const start = positions.get(invoke) ?? 0;
    const end = completion === undefined ? Infinity : (positions.get(completion) ?? 0);
    if (invoke.f === 'add' || invoke.f === 'increment' || invoke.f === 'inc') {
      if (completion?.type === 'fail') continue;
      const k = keyOps(invoke);
      const delta = number(k.v, 'add', invoke);
      adds++;
      k.ops.attempted.push({ position: start, delta });
      if (completion?.type === 'ok') k.ops.acknowledged.push({ position: end, delta });
    } else if (invoke.f === 'read') {
      if (completion?.type !== 'ok') continue;
      const k = keyOps(invoke);
      const value = number(completedValue(completion, k.keyed), 'read', completion);
      reads++;
      k.ops.reads.push({ invoke, completion, start, end, value });
    } else {
      throw new Error(`op ${invoke.index}: a counter history has add and read ops, not ${invoke.f}`);
    }
  }
  const violations: CounterViolation[] = [];
  for (const { key, ops: k } of byKey.values()) {
    k.acknowledged.sort((a, b) => a.position - b.position);
    k.attempted.sort((a, b) => a.position - b.position);
    const ackSums = prefixSums(k.acknowledged);
    const attemptSums = prefixSums(k.attempted);
    for (const r of k.reads) {
      const lower = sumBefore(k.acknowledged, ackSums, r.start);
      const upper = sumBefore(k.attempted, attemptSums, r.end);
      if (r.value >= lower && r.value <= upper) continue;
      const where = key === undefined ? '' : `key ${exactJson(key)}: `;
      const why =
        r.value < lower
          ? `below ${lower}, the sum of the adds acknowledged before it began (an acknowledged add lost or not yet visible)`
          : `above ${upper}, the sum of every add invoked before it ended (counted twice, or never added)`;
      violations.push({
        key,
        value: r.value,
        lower,
        upper,
        read: [r.invoke, r.completion],
        message: `${where}${describePair(r.invoke, r.completion)} returned ${r.value}, ${why}`,
      });
    }
  }
  return { valid: violations.length === 0, keys: byKey.size, adds, reads, violations };
}
