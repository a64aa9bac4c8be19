import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { UsageError } from '../core/errors.js';
import { a12, mannWhitneyU, mean, median } from '../report/stats.js';
import { lineChartSvg, type Series } from '../report/plot.js';
import { readStoredMetrics } from '../store/run-reader.js';
import { timestampName } from '../store/run-store.js';
import { FAULT_FAMILIES, type FaultFamily } from '../core/fault.js';
import { POLICIES, type PolicyName, type RunConfig } from './config.js';
import type { Reporter, RunSummary } from './reporter.js';
import { runCampaign } from './run-campaign.js';

export interface CompareRun {
  readonly seed: number;
  readonly runDir: string;
  readonly metrics: Readonly<Record<string, number>>;
  readonly bugs: readonly { readonly name: string; readonly atMs: number }[];
}

export interface Comparison {
  readonly metric: string;
  readonly policy: string;
  readonly baseline: string;
  readonly mean: number;
  readonly baselineMean: number;
  readonly ratio: number;
  readonly a12: number;
  readonly p: number;
}

export interface BugTiming {
  /** Runs that found the bug. */
  readonly found: number;
  readonly runs: number;
  /**
   * Median ms to first detection over all runs, a run that did not find it counting as never
   * (censored at the budget); null when half or more of the runs did not find it.
   */
  readonly medianMs: number | null;
  /** Median over the runs that found it only. */
  readonly medianFoundMs: number | null;
  readonly minMs: number | null;
  readonly maxMs: number | null;
  /**
   * Â12 that this policy finds it sooner than the baseline (times censored at the budget);
   * absent for the baseline itself.
   */
  readonly a12Sooner?: number;
  readonly p?: number;
}

export interface CompareResult {
  readonly system: string;
  /**
   * The client workload every run used, as `--workload` gave it (a built-in's name or a module's
   * path; `register` in comparisons written before it was recorded).
   */
  readonly workload: string;
  readonly timeMs: number;
  readonly baseline: string;
  readonly policies: Readonly<Record<string, { readonly runs: readonly CompareRun[] }>>;
  readonly comparisons: readonly Comparison[];
  /** Per policy and bug name. */
  readonly timeToBug: Readonly<Record<string, Readonly<Record<string, BugTiming>>>>;
  readonly dir: string;
  readonly plot: string;
}

/**
 * Coverage metrics that also get an area-under-the-curve variant: the metric's mean over the run
 * (its integral over time ÷ the budget), which rewards reaching coverage sooner — the only way
 * to tell policies apart on a measure that every policy saturates within the budget.
 */
const AUC_METRICS = [
  'states_causal',
  'states_artifact',
  'event_types',
  'intra_pairs',
  'cross_pairs',
  'transitions_causal',
  'transitions_artifact',
];

/**
 * Metrics that measure what a run cost, not what it reached: less is better. The rest (coverage,
 * bugs) are better higher.
 */
export const COST_METRICS: ReadonlySet<string> = new Set(['fuzzer_peak_rss_mb', 'events_shed', 'sim_wall_s']);

/**
 * A simulated run's virtual seconds and speed-up: how its budget ran and how fast the simulator
 * was, neither coverage nor a policy's cost (the wall seconds are, in {@link COST_METRICS}).
 */
const UNCOMPARED_METRICS: ReadonlySet<string> = new Set(['sim_virtual_s', 'sim_speedup']);

/**
 * The smallest two-sided p a rank test can give for samples of these sizes (every run of one
 * side above every run of the other): 2 / C(n + m, n). Above 0.05, no difference can show as
 * significant, whatever the runs found.
 */
export function smallestP(n: number, m: number): number {
  let ways = 1;
  for (let i = 1; i <= Math.min(n, m); i++) ways = (ways * (n + m - i + 1)) / i;
  return Math.min(1, 2 / ways);
}

/** The level below which a p-value shows a difference. */
export const SIGNIFICANCE = 0.05;

/** Runs per side from which a rank test can show a difference at {@link SIGNIFICANCE}. */
export const LEAST_RUNS_FOR_SIGNIFICANCE = 4;

/**
 * The warning a comparison too small for any difference to be significant carries, or undefined.
 * `moreRuns` says how to get more runs where the comparison was made (`use --runs 4 or more` for
 * `compare`, `--seeds 4 or more` for a plan).
 */
export function fewRunsWarning(
  result: Pick<CompareResult, 'baseline' | 'policies'>,
  moreRuns: string,
): string | undefined {
  const { baseline } = result;
  const baseRuns = result.policies[baseline]?.runs.length ?? 0;
  const few = Object.entries(result.policies)
    .map(([p, { runs }]): [string, number] => [p, runs.length])
    .find(([p, n]) => p !== baseline && smallestP(n, baseRuns) > SIGNIFICANCE);
  if (few === undefined) return undefined;
  const [p, n] = few;
  return `warning: with ${n} run${n === 1 ? '' : 's'} of ${p} and ${baseRuns} of ${baseline}, no difference can be significant (the smallest p these sizes allow is ${smallestP(n, baseRuns).toFixed(3)}): Â12 and p say nothing yet; ${moreRuns}`;
}

/** The time-to-bug row for the first finding of any kind. */
export const ANY_BUG = '(any)';

/** The coverage metric plotted over time. */
const PLOT_METRIC = 'states_causal';
const PLOT_BUCKETS = 40;

/** Bugs are compared by what was found: the checker's kind and name. */
function bugName(b: { kind: string; name: string }): string {
  return `${b.kind}/${b.name}`;
}

/** Each metric's per-step series from one run's `metrics` table (read and parsed once). */
function readSeries(runDir: string, metrics: readonly string[]): Record<string, [number, number][]> {
  const out: Record<string, [number, number][]> = Object.fromEntries(metrics.map((m) => [m, []]));
  for (const r of readStoredMetrics(runDir)) {
    for (const m of metrics) out[m].push([r.atMs, r.values[m] ?? 0]);
  }
  return out;
}

/** The mean over runs of a step function sampled at `buckets` points up to `endMs`. */
function meanSeries(runs: readonly [number, number][][], endMs: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i <= PLOT_BUCKETS; i++) {
    const t = (endMs * i) / PLOT_BUCKETS;
    const values = runs.map((points) => {
      let v = 0;
      for (const [at, y] of points) if (at <= t) v = y;
      return v;
    });
    out.push([t / 60_000, mean(values)]);
  }
  return out;
}

/** Per coverage metric, its mean over [0, timeMs] as a step function of the per-step samples. */
export function aucMetrics(
  series: Readonly<Record<string, readonly (readonly [number, number])[]>>,
  timeMs: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [metric, points] of Object.entries(series)) {
    let area = 0;
    for (let i = 0; i < points.length; i++) {
      const [at, y] = points[i];
      if (at >= timeMs) break;
      const next = i + 1 < points.length ? Math.min(points[i + 1][0], timeMs) : timeMs;
      area += y * (next - at);
    }
    out[`${metric}_auc`] = Math.round((100 * area) / timeMs) / 100;
  }
  return out;
}

function runAucMetrics(runDir: string, timeMs: number): Record<string, number> {
  return aucMetrics(readSeries(runDir, AUC_METRICS), timeMs);
}

/**
 * One side of a comparison: a policy, and the fault families its campaigns use beyond the base
 * configuration's (`adaptive+disk` is the adaptive policy with the disk family added), so a
 * comparison can ask what a policy gains from a fault family as well as from another policy.
 */
export interface CompareArm {
  /** As written: `adaptive`, `adaptive+disk+clock`. */
  readonly name: string;
  readonly policy: PolicyName;
  readonly addFaults: readonly FaultFamily[];
  /** `+exchange`: the side's campaigns share what they learn (`--exchange`). */
  readonly exchange: boolean;
}

/** The arm modifier that makes a side's campaigns share what they learn. */
export const EXCHANGE_MODIFIER = 'exchange';

/**
 * Reads an arm as `POLICY` or `POLICY+FAMILY[+FAMILY…]`, any of them with `+exchange` (its
 * campaigns share what they learn); throws a usage error naming what is allowed for an unknown
 * policy or family.
 */
export function parseArm(text: string): CompareArm {
  const [policy, ...modifiers] = text
    .trim()
    .split('+')
    .map((p) => p.trim());
  if (!(POLICIES as readonly string[]).includes(policy)) {
    throw new UsageError(
      'bad-flag',
      `--policies: unknown policy "${policy}": choose from ${POLICIES.join(', ')}`,
    );
  }
  const exchange = modifiers.includes(EXCHANGE_MODIFIER);
  const families = modifiers.filter((m) => m !== EXCHANGE_MODIFIER);
  for (const f of families) {
    if (!(FAULT_FAMILIES as readonly string[]).includes(f)) {
      throw new UsageError(
        'bad-flag',
        `--policies: unknown fault family "${f}" in "${text.trim()}": choose from ${FAULT_FAMILIES.join(', ')} (or ${EXCHANGE_MODIFIER}: the side's campaigns share what they learn)`,
      );
    }
  }
  return { name: text.trim(), policy: policy as PolicyName, addFaults: families as FaultFamily[], exchange };
}

/**
 * Runs each arm `runs` times on the same system, budget and seeds (interleaved, one campaign at
 * a time so they do not compete for the cores), then compares every metric against the baseline.
 */
export async function comparePolicies(options: {
  readonly base: RunConfig;
  readonly arms: readonly CompareArm[];
  readonly runs: number;
  readonly seed: number;
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
  readonly onRun?: (policy: string, run: number, summary: RunSummary) => void;
}): Promise<CompareResult> {
  const { base, arms, runs } = options;
  const exchangeRoot = join(resolve(base.store), 'exchange', `compare-${timestampName()}`);
  const results: Record<string, CompareRun[]> = Object.fromEntries(arms.map((a) => [a.name, []]));
  for (let r = 0; r < runs && !options.signal.aborted; r++) {
    for (const arm of arms) {
      if (options.signal.aborted) break;
      const seed = options.seed + r;
      const faults = [...new Set([...base.faults, ...arm.addFaults])];
      const config: RunConfig = {
        ...base,
        policy: arm.policy,
        faults,
        seed,
        ...(arm.exchange ? { exchange: join(exchangeRoot, arm.name.replace(/[^A-Za-z0-9._-]+/g, '_')) } : {}),
      };
      const summary = await runCampaign(config, { reporters: [options.reporter], signal: options.signal });
      options.onRun?.(arm.name, r, summary);
      results[arm.name].push(compareRunOf(summary, base.timeMs));
    }
  }
  return summariseRuns({
    system: base.system,
    workload: base.workload,
    timeMs: base.timeMs,
    store: base.store,
    results,
    stopOnBug: base.stopOnBug,
  });
}

/** What a comparison keeps of one campaign: its seed, run dir, metrics (with their AUCs) and bugs. */
export function compareRunOf(summary: RunSummary, timeMs: number): CompareRun {
  return {
    seed: summary.seed,
    runDir: summary.runDir,
    metrics: {
      ...summary.metrics,
      ...runAucMetrics(summary.runDir, timeMs),
      bugs: summary.bugs.length,
      distinct_bugs: new Set(summary.bugs.map(bugName)).size,
    },
    bugs: summary.bugs.map((b) => ({ name: bugName(b), atMs: b.foundAtMs })),
  };
}

/**
 * Merges earlier comparisons (their `compare.json`) into one: the runs of each policy are pooled,
 * so a long comparison can be split over several processes or machines and summarised together.
 * They must be of the same system, workload and budget.
 */
export function mergeComparisons(files: readonly string[], store: string): CompareResult {
  if (files.length === 0) throw new UsageError('bad-flag', '--from needs at least one compare.json');
  const results: Record<string, CompareRun[]> = {};
  let first: { system: string; workload: string; timeMs: number; file: string } | undefined;
  for (const file of files) {
    const path = file.endsWith('.json') ? file : join(file, 'compare.json');
    if (!existsSync(path)) {
      throw new UsageError(
        'bad-flag',
        `--from: ${path} does not exist: give a compare directory or its compare.json`,
      );
    }
    let data: Partial<CompareResult>;
    try {
      data = JSON.parse(readFileSync(path, 'utf8')) as Partial<CompareResult>;
    } catch (e) {
      throw new UsageError(
        'bad-input',
        `--from: ${path} is not JSON (${e instanceof Error ? e.message : String(e)})`,
      );
    }
    if (typeof data.system !== 'string' || typeof data.timeMs !== 'number' || data.policies === undefined) {
      throw new UsageError('bad-input', `--from: ${path} is not a compare.json written by mallory compare`);
    }
    const workload = data.workload ?? 'register';
    if (first === undefined) first = { system: data.system, workload, timeMs: data.timeMs, file: path };
    else if (first.system !== data.system || first.workload !== workload || first.timeMs !== data.timeMs) {
      throw new UsageError(
        'bad-input',
        `--from: ${path} is ${data.system} (${workload}) at ${data.timeMs} ms but ${first.file} is ${first.system} (${first.workload}) at ${first.timeMs} ms: only like comparisons can be merged`,
      );
    }
    for (const [policy, { runs }] of Object.entries(data.policies)) {
      (results[policy] ??= []).push(...runs);
    }
  }
  return summariseRuns({
    system: first!.system,
    workload: first!.workload,
    timeMs: first!.timeMs,
    store,
    results,
    stopOnBug: false,
  });
}

/**
 * The comparison of the runs of each side: every metric and time to bug against the baseline
 * (`random` when it is a side, else the last), written with its plot into `dir` (a new
 * `<store>/compare/<timestamp>/` when absent).
 */
export function summariseRuns(input: {
  readonly system: string;
  readonly workload: string;
  readonly timeMs: number;
  readonly store: string;
  readonly results: Readonly<Record<string, readonly CompareRun[]>>;
  readonly stopOnBug: boolean;
  readonly dir?: string;
}): CompareResult {
  const { results, timeMs } = input;
  const policies = Object.keys(results);
  const baseline = policies.includes('random') ? 'random' : policies[policies.length - 1];
  const comparisons = compareMetrics(results, baseline, input.stopOnBug);
  const timeToBug = timesToBug(results, baseline, timeMs);
  const dir = input.dir ?? join(resolve(input.store), 'compare', timestampName());
  mkdirSync(dir, { recursive: true });
  const plot = writeCoveragePlot(dir, results, timeMs);
  const policiesOut = Object.fromEntries(policies.map((p) => [p, { runs: results[p] }]));
  const result: CompareResult = {
    system: input.system,
    workload: input.workload,
    timeMs,
    baseline,
    policies: policiesOut,
    comparisons,
    timeToBug,
    dir,
    plot,
  };
  writeFileSync(join(dir, 'compare.json'), JSON.stringify(result, null, 2) + '\n');
  return result;
}

/** Each policy against the baseline on every metric: the means, their ratio, Â12 and p. */
function compareMetrics(
  results: Readonly<Record<string, readonly CompareRun[]>>,
  baseline: string,
  stopOnBug: boolean,
): Comparison[] {
  const comparisons: Comparison[] = [];
  const metricNames = [
    ...new Set(Object.values(results).flatMap((rs) => rs.flatMap((r) => Object.keys(r.metrics)))),
  ]
    .filter((m) => !UNCOMPARED_METRICS.has(m))
    .sort();
  for (const policy of Object.keys(results)) {
    if (policy === baseline) continue;
    for (const metric of metricNames) {
      // With --stop-on-bug a run's coverage stops when it finds the bug: not comparable.
      if (stopOnBug && metric !== 'bugs' && metric !== 'distinct_bugs') continue;
      const xs = results[policy].map((r) => r.metrics[metric] ?? 0);
      const ys = results[baseline].map((r) => r.metrics[metric] ?? 0);
      if (xs.length === 0 || ys.length === 0) continue;
      const mx = mean(xs);
      const my = mean(ys);
      comparisons.push({
        metric,
        policy,
        baseline,
        mean: mx,
        baselineMean: my,
        ratio: my === 0 ? (mx === 0 ? 1 : Infinity) : mx / my,
        a12: a12(xs, ys),
        p: mannWhitneyU(xs, ys).p,
      });
    }
  }
  return comparisons;
}

/** Per policy and bug found by any run: how soon its runs found it, and against the baseline. */
function timesToBug(
  results: Readonly<Record<string, readonly CompareRun[]>>,
  baseline: string,
  timeMs: number,
): Record<string, Record<string, BugTiming>> {
  const found = [
    ...new Set(Object.values(results).flatMap((rs) => rs.flatMap((r) => r.bugs.map((b) => b.name)))),
  ].sort();
  // With a bug switched on, any finding is that bug showing: time to the first of any kind.
  const names = found.length > 0 ? [ANY_BUG, ...found] : [];
  /** First detection per run, Infinity when the run did not find it. */
  const firsts = (policy: string, name: string): number[] =>
    results[policy].map((r) => {
      const times = r.bugs.filter((b) => name === ANY_BUG || b.name === name).map((b) => b.atMs);
      return times.length > 0 ? Math.min(...times) : Infinity;
    });
  const timeToBug: Record<string, Record<string, BugTiming>> = {};
  for (const policy of Object.keys(results)) {
    timeToBug[policy] = {};
    for (const name of names) {
      const all = firsts(policy, name);
      const hits = all.filter((t) => Number.isFinite(t));
      const censoredMedian = all.length > 0 ? median(all) : Infinity;
      let vsBaseline: { a12Sooner: number; p: number } | undefined;
      if (policy !== baseline && all.length > 0 && results[baseline].length > 0) {
        // Sooner is better: compare negated times, a miss counting as one past the budget.
        const cap = (t: number): number => -Math.min(t, timeMs + 1);
        const xs = all.map(cap);
        const ys = firsts(baseline, name).map(cap);
        vsBaseline = { a12Sooner: a12(xs, ys), p: mannWhitneyU(xs, ys).p };
      }
      timeToBug[policy][name] = {
        found: hits.length,
        runs: all.length,
        medianMs: Number.isFinite(censoredMedian) ? censoredMedian : null,
        medianFoundMs: hits.length > 0 ? median(hits) : null,
        minMs: hits.length > 0 ? Math.min(...hits) : null,
        maxMs: hits.length > 0 ? Math.max(...hits) : null,
        ...vsBaseline,
      };
    }
  }
  return timeToBug;
}

/** The mean coverage over time of each policy's runs, plotted into `dir`; returns the plot's path. */
function writeCoveragePlot(
  dir: string,
  results: Readonly<Record<string, readonly CompareRun[]>>,
  timeMs: number,
): string {
  const policies = Object.keys(results);
  const series: Series[] = policies.map((policy) => ({
    name: policy,
    points: meanSeries(
      results[policy]
        .filter((r) => existsSync(join(r.runDir, 'run.db')))
        .map((r) => readSeries(r.runDir, [PLOT_METRIC])[PLOT_METRIC]),
      timeMs,
    ),
  }));
  const plot = join(dir, 'coverage.svg');
  const runs = Math.max(...policies.map((p) => results[p].length));
  writeFileSync(
    plot,
    lineChartSvg(
      `Distinct states (${PLOT_METRIC}) over time, mean of ${runs} runs`,
      'minutes',
      'states',
      series,
    ),
  );
  return plot;
}
