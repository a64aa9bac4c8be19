import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import Database from 'better-sqlite3';

import { a12, mannWhitneyU, mean, median } from '../report/stats.js';
import { lineChartSvg, type Series } from '../report/plot.js';
import { timestampName } from '../store/run-store.js';
import { Campaign } from './campaign.js';
import { defaultCheckers } from './checkers.js';
import type { PolicyName, RunConfig } from './config.js';
import type { Reporter, RunSummary } from './reporter.js';

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

export interface CompareResult {
  readonly policies: Readonly<Record<string, { readonly runs: readonly CompareRun[] }>>;
  readonly comparisons: readonly Comparison[];
  /** Per policy and bug name: median ms to first detection over the runs that found it. */
  readonly timeToBug: Readonly<
    Record<string, Readonly<Record<string, { found: number; runs: number; medianMs: number | null }>>>
  >;
  readonly dir: string;
  readonly plot: string;
}

/** The coverage metric plotted over time. */
const PLOT_METRIC = 'states_causal';
const PLOT_BUCKETS = 40;

/** Bugs are compared by what was found: the checker's kind and name. */
function bugName(b: { kind: string; name: string }): string {
  return `${b.kind}/${b.name}`;
}

function readSeries(runDir: string, metric: string): [number, number][] {
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT at_ms, values_json FROM metrics ORDER BY at_ms').all() as {
      at_ms: number;
      values_json: string;
    }[];
    return rows.map((r) => [r.at_ms, (JSON.parse(r.values_json) as Record<string, number>)[metric] ?? 0]);
  } finally {
    db.close();
  }
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

/**
 * Runs each policy `runs` times on the same system, budget and seeds (interleaved, one campaign at
 * a time so they do not compete for the cores), then compares every metric against the baseline.
 */
export async function comparePolicies(options: {
  readonly base: RunConfig;
  readonly policies: readonly PolicyName[];
  readonly runs: number;
  readonly seed: number;
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
  readonly onRun?: (policy: string, run: number, summary: RunSummary) => void;
}): Promise<CompareResult> {
  const { base, policies, runs } = options;
  const results: Record<string, CompareRun[]> = Object.fromEntries(policies.map((p) => [p, []]));
  for (let r = 0; r < runs && !options.signal.aborted; r++) {
    for (const policy of policies) {
      if (options.signal.aborted) break;
      const seed = options.seed + r;
      const config: RunConfig = { ...base, policy, seed };
      const campaign = new Campaign({
        config,
        reporters: [options.reporter],
        signal: options.signal,
        checkers: defaultCheckers(config),
      });
      const summary = await campaign.run();
      options.onRun?.(policy, r, summary);
      results[policy].push({
        seed,
        runDir: summary.runDir,
        metrics: {
          ...summary.metrics,
          bugs: summary.bugs.length,
          distinct_bugs: new Set(summary.bugs.map(bugName)).size,
        },
        bugs: summary.bugs.map((b) => ({ name: bugName(b), atMs: b.foundAtMs })),
      });
    }
  }
  const baseline = policies.includes('random') ? 'random' : policies[policies.length - 1];
  const comparisons: Comparison[] = [];
  const metricNames = [
    ...new Set(Object.values(results).flatMap((rs) => rs.flatMap((r) => Object.keys(r.metrics)))),
  ].sort();
  for (const policy of policies) {
    if (policy === baseline) continue;
    for (const metric of metricNames) {
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
  const timeToBug: Record<
    string,
    Record<string, { found: number; runs: number; medianMs: number | null }>
  > = {};
  for (const policy of policies) {
    const names = new Set(
      Object.values(results).flatMap((rs) => rs.flatMap((r) => r.bugs.map((b) => b.name))),
    );
    timeToBug[policy] = {};
    for (const name of names) {
      const firsts = results[policy].flatMap((r) => {
        const times = r.bugs.filter((b) => b.name === name).map((b) => b.atMs);
        return times.length > 0 ? [Math.min(...times)] : [];
      });
      timeToBug[policy][name] = {
        found: firsts.length,
        runs: results[policy].length,
        medianMs: firsts.length > 0 ? median(firsts) : null,
      };
    }
  }
  const dir = join(resolve(base.store), 'compare', timestampName());
  mkdirSync(dir, { recursive: true });
  const series: Series[] = policies.map((policy) => ({
    name: policy,
    points: meanSeries(
      results[policy].map((r) => readSeries(r.runDir, PLOT_METRIC)),
      base.timeMs,
    ),
  }));
  const plot = join(dir, 'coverage.svg');
  writeFileSync(
    plot,
    lineChartSvg(
      `Distinct states (${PLOT_METRIC}) over time, mean of ${runs} runs`,
      'minutes',
      'states',
      series,
    ),
  );
  const policiesOut = Object.fromEntries(policies.map((p) => [p, { runs: results[p] }]));
  const result: CompareResult = { policies: policiesOut, comparisons, timeToBug, dir, plot };
  writeFileSync(join(dir, 'compare.json'), JSON.stringify(result, null, 2) + '\n');
  return result;
}
