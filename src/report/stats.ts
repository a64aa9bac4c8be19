/**
 * Statistics for comparing campaigns (`mallory compare`): per metric, the mean and median of each
 * policy's runs, the Vargha–Delaney Â12 effect size and a two-sided Mann–Whitney U p-value against
 * the baseline (Arcuri & Briand's guidelines for randomised algorithms).
 *
 * Usage: `a12(adaptiveStates, randomStates)` ≥ 0.71 is a large effect in favour of the first
 * sample; `mannWhitneyU(xs, ys).p` < 0.05 is significant.
 */

/**
 * Samples up to this total size get the exact U distribution (with ties: the exact distribution
 * of the mid-rank sum over every arrangement of these values, as a permutation test has it).
 */
const EXACT_MAX_TOTAL = 40;

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

interface Ranked {
  /** Sum of the (mid-)ranks of the first sample. */
  readonly rankSum: number;
  /** Σ (t³ − t) over groups of tied values. */
  readonly tieTerm: number;
  /** Every value's (mid-)rank doubled (a whole number), first sample and second alike. */
  readonly doubledRanks: readonly number[];
}

function rank(xs: readonly number[], ys: readonly number[]): Ranked {
  const all = [...xs.map((v) => ({ v, first: true })), ...ys.map((v) => ({ v, first: false }))];
  all.sort((a, b) => a.v - b.v);
  let rankSum = 0;
  let tieTerm = 0;
  const doubledRanks: number[] = [];
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1].v === all[i].v) j++;
    const midRank = (i + j) / 2 + 1;
    const t = j - i + 1;
    tieTerm += t * t * t - t;
    for (let k = i; k <= j; k++) {
      if (all[k].first) rankSum += midRank;
      doubledRanks.push(i + j + 2);
    }
    i = j + 1;
  }
  return { rankSum, tieTerm, doubledRanks };
}

function requireSamples(what: string, xs: readonly number[], ys: readonly number[]): void {
  if (xs.length === 0 || ys.length === 0) {
    throw new RangeError(`${what} needs two non-empty samples, got sizes ${xs.length} and ${ys.length}`);
  }
}

/**
 * Vargha–Delaney Â12: the probability that a value drawn from `xs` is larger than one drawn from
 * `ys`, ties counting half. 0.5 = no difference; ≥ 0.71 a large effect in favour of `xs`.
 */
export function a12(xs: readonly number[], ys: readonly number[]): number {
  requireSamples('a12', xs, ys);
  const m = xs.length;
  const n = ys.length;
  const { rankSum } = rank(xs, ys);
  return (rankSum / m - (m + 1) / 2) / n;
}

export interface MannWhitneyResult {
  /** U of the first sample: the number of pairs (x, y) with x > y, ties counting half. */
  readonly u: number;
  /** Two-sided p-value. */
  readonly p: number;
  readonly method: 'exact' | 'normal';
}

/** Standard normal upper tail, P(Z > z) (Abramowitz–Stegun 7.1.26 via erfc, error < 1.5e-7). */
export function normalSf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erfc = poly * Math.exp(-x * x);
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

/**
 * How many of the C(N, m) ways to pick `m` of the values give each sum of their doubled ranks
 * (index: the sum): the distribution of the first sample's rank sum when the samples do not
 * differ, ties kept as they are.
 */
function rankSumCounts(doubledRanks: readonly number[], m: number): number[] {
  const maxSum = doubledRanks.reduce((a, b) => a + b, 0);
  // ways[k][s]: picks of k values among those seen so far whose doubled ranks sum to s
  const ways: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(maxSum + 1).fill(0));
  ways[0][0] = 1;
  for (const r of doubledRanks) {
    for (let k = m; k >= 1; k--) {
      const from = ways[k - 1];
      const to = ways[k];
      for (let sum = maxSum - r; sum >= 0; sum--) if (from[sum] !== 0) to[sum + r] += from[sum];
    }
  }
  return ways[m];
}

/**
 * Two-sided Mann–Whitney U test. Exact when m + n ≤ 40, ties or not (the permutation distribution
 * of the mid-rank sum: never below 2 / C(m + n, m), the least any arrangement allows); otherwise
 * the normal approximation with tie correction and continuity correction (as scipy's). The normal
 * approximation is not used for small tied samples: at 2 runs against 2 it gives p = 0.19 where
 * no arrangement can give less than 0.33.
 */
export function mannWhitneyU(xs: readonly number[], ys: readonly number[]): MannWhitneyResult {
  requireSamples('mannWhitneyU', xs, ys);
  const m = xs.length;
  const n = ys.length;
  const { rankSum, tieTerm, doubledRanks } = rank(xs, ys);
  const u = rankSum - (m * (m + 1)) / 2;
  if (m + n <= EXACT_MAX_TOTAL) {
    const counts = rankSumCounts(doubledRanks, m);
    const observed = 2 * rankSum;
    let total = 0;
    let le = 0;
    let ge = 0;
    for (let sum = 0; sum < counts.length; sum++) {
      total += counts[sum];
      if (sum <= observed) le += counts[sum];
      if (sum >= observed) ge += counts[sum];
    }
    return { u, p: Math.min(1, (2 * Math.min(le, ge)) / total), method: 'exact' };
  }
  const N = m + n;
  const mu = (m * n) / 2;
  const variance = ((m * n) / 12) * (N + 1 - tieTerm / (N * (N - 1)));
  if (variance <= 0) return { u, p: 1, method: 'normal' };
  const z = Math.max(0, Math.abs(u - mu) - 0.5) / Math.sqrt(variance);
  return { u, p: Math.min(1, 2 * normalSf(z)), method: 'normal' };
}

/**
 * The `q`-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics (Hyndman & Fan's
 * type 7, the default of R and numpy): at h = (n − 1)·q, x⌊h⌋ + (h − ⌊h⌋)(x⌊h⌋+1 − x⌊h⌋). The
 * quartiles of 1, 2, 3, 4 are 1.75 and 3.25.
 */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  return lo + 1 < s.length ? s[lo] + (h - lo) * (s[lo + 1] - s[lo]) : s[lo];
}
