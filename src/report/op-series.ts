import { NS_PER_MS } from '../core/clock.js';
import type { Op } from '../core/op.js';
import { isRefusal } from '../core/refusal.js';

export const OUTCOMES = ['ok', 'fail', 'info'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A client op's completion: when it ended, how, and how long after its invocation. */
export interface Completion {
  readonly endMs: number;
  readonly outcome: Outcome;
  readonly latencyMs: number;
  /** A fail whose connection was refused (`isRefusal`). */
  readonly refused?: true;
}

/** Per outcome, points `[bucket midpoint in s, value]`; a bucket without data has `NaN` (a gap). */
export type OutcomeSeries = Readonly<Record<Outcome, readonly (readonly [number, number])[]>>;

export interface OpSeries {
  readonly bucketMs: number;
  /** Completions per second. */
  readonly rate: OutcomeSeries;
  /** Latency quantiles in ms, one series per requested quantile. */
  readonly latency: readonly { readonly quantile: number; readonly series: OutcomeSeries }[];
  readonly counts: Readonly<Record<Outcome, number>>;
}

/** At most this many buckets across a run; a bucket is never shorter than MIN_BUCKET_MS. */
const MAX_BUCKETS = 240;
const MIN_BUCKET_MS = 1000;
const NICE_BUCKETS_MS = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000];

/** The bucket width for a run of `durationMs`: the smallest round width giving ≤ 240 buckets. */
export function bucketMsFor(durationMs: number): number {
  const wanted = Math.max(MIN_BUCKET_MS, durationMs / MAX_BUCKETS);
  return NICE_BUCKETS_MS.find((b) => b >= wanted) ?? Math.ceil(wanted / 60_000) * 60_000;
}

/**
 * Pairs each client op's completion (`ok | fail | info`) with its invocation by the same process
 * (Jepsen's history shape). Nemesis ops and completions without an invocation are left out.
 */
export function completions(ops: readonly Op[]): Completion[] {
  const invoked = new Map<Op['process'], number>();
  const out: Completion[] = [];
  for (const op of ops) {
    if (op.process === 'nemesis') continue;
    if (op.type === 'invoke') {
      invoked.set(op.process, op.time);
      continue;
    }
    const start = invoked.get(op.process);
    if (start === undefined) continue;
    invoked.delete(op.process);
    out.push({
      endMs: op.time / NS_PER_MS,
      outcome: op.type,
      latencyMs: (op.time - start) / NS_PER_MS,
      ...(isRefusal(op) ? { refused: true as const } : {}),
    });
  }
  return out;
}

/** The q-quantile (nearest rank) of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

function emptyBuckets(n: number): Record<Outcome, number[][]> {
  const make = (): number[][] => Array.from({ length: n }, () => []);
  return { ok: make(), fail: make(), info: make() };
}

/**
 * Throughput and latency over time by outcome, from completions bucketed by their end time into
 * `bucketMs` buckets covering `[0, endMs)` (Jepsen's rate and latency-quantile plots).
 */
export function opSeries(
  done: readonly Completion[],
  options: { readonly endMs: number; readonly bucketMs?: number; readonly quantiles?: readonly number[] },
): OpSeries {
  const endMs = Math.max(options.endMs, ...done.map((c) => c.endMs));
  const bucketMs = options.bucketMs ?? bucketMsFor(endMs);
  const n = Math.max(1, Math.ceil(endMs / bucketMs));
  const buckets = emptyBuckets(n);
  const counts: Record<Outcome, number> = { ok: 0, fail: 0, info: 0 };
  for (const c of done) {
    const i = Math.min(n - 1, Math.floor(c.endMs / bucketMs));
    buckets[c.outcome][i].push(c.latencyMs);
    counts[c.outcome]++;
  }
  const at = (i: number): number => ((i + 0.5) * bucketMs) / 1000;
  const perSecond = 1000 / bucketMs;
  const map = (f: (values: number[]) => number): OutcomeSeries => ({
    ok: buckets.ok.map((v, i) => [at(i), f(v)] as const),
    fail: buckets.fail.map((v, i) => [at(i), f(v)] as const),
    info: buckets.info.map((v, i) => [at(i), f(v)] as const),
  });
  for (const o of Object.values(buckets)) for (const b of o) b.sort((x, y) => x - y);
  return {
    bucketMs,
    rate: map((v) => v.length * perSecond),
    latency: (options.quantiles ?? [0.5, 0.95]).map((q) => ({
      quantile: q,
      series: map((v) => quantile(v, q)),
    })),
    counts,
  };
}
