import {
  ANY_BUG,
  COST_METRICS,
  fewRunsWarning,
  LEAST_RUNS_FOR_SIGNIFICANCE,
  type CompareResult,
  type Comparison,
} from '../../campaign/compare.js';

/** How `compare` gets more runs. */
const COMPARE_MORE_RUNS = `use --runs ${LEAST_RUNS_FOR_SIGNIFICANCE} or more (or merge comparisons with --from)`;

function fmt(n: number): string {
  return Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2)) : 'inf';
}

function secs(ms: number | null): string {
  return ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`;
}

/** The rows of one block: the policy's mean beside the baseline's, under a header naming both. */
function block(title: string, rows: readonly Comparison[], baseline: string): string[] {
  if (rows.length === 0) return [];
  const baseHeader = `${baseline} mean`;
  const width = Math.max(9, baseHeader.length);
  const lines = [
    '',
    title,
    `${'metric'.padEnd(24)} ${'policy'.padEnd(9)} ${'mean'.padStart(8)} ${baseHeader.padStart(width)} ${'ratio'.padStart(6)} ${'Â12'.padStart(5)} ${'p'.padStart(6)}`,
  ];
  for (const c of rows) {
    lines.push(
      `${c.metric.padEnd(24)} ${c.policy.padEnd(9)} ${fmt(c.mean).padStart(8)} ${fmt(c.baselineMean).padStart(width)} ${fmt(c.ratio).padStart(6)} ${c.a12.toFixed(2).padStart(5)} ${c.p.toFixed(3).padStart(6)}`,
    );
  }
  return lines;
}

/** Runs per policy, as the comparison holds them. */
function runCounts(result: CompareResult): Record<string, number> {
  return Object.fromEntries(Object.entries(result.policies).map(([p, { runs }]) => [p, runs.length]));
}

/**
 * `mallory compare`'s table. The baseline's column is named by the baseline; metrics that are
 * costs (less is better) are a block of their own, apart from coverage and bugs; a comparison whose
 * runs are too few for any difference to be significant says so; and time to first detection
 * says when no run found a bug. `moreRuns` says how to get more runs where the comparison was made
 * (`compare`'s `--runs` by default).
 */
export function compareTable(
  result: CompareResult,
  options: {
    readonly moreRuns?: string;
    /** Leave out the warning and time to first detection (a fleet report says them its own way). */
    readonly metricsOnly?: boolean;
  } = {},
): string {
  const { baseline } = result;
  const lines = [`${result.system}, workload ${result.workload}, ${fmt(result.timeMs / 1000)} s per run`];
  const counts = runCounts(result);
  lines.push(
    `runs: ${Object.entries(counts)
      .map(([p, n]) => `${p} ${n}`)
      .join(', ')}; baseline ${baseline}`,
  );
  const gains = result.comparisons.filter((c) => !COST_METRICS.has(c.metric));
  const costs = result.comparisons.filter((c) => COST_METRICS.has(c.metric));
  lines.push(
    ...block(
      `coverage and bugs (more is better; Â12: the chance a run of the policy reaches more than a run of ${baseline}):`,
      gains,
      baseline,
    ),
    ...block(
      `costs (less is better; Â12: the chance a run of the policy costs more than a run of ${baseline}):`,
      costs,
      baseline,
    ),
  );
  if (options.metricsOnly === true) {
    lines.push('', `plot: ${result.plot}`, `data: ${result.dir}/compare.json`);
    return lines.join('\n');
  }
  const warning = fewRunsWarning(result, options.moreRuns ?? COMPARE_MORE_RUNS);
  if (warning !== undefined) lines.push('', warning);
  lines.push('');
  const timings = Object.entries(result.timeToBug).flatMap(([policy, bugs]) =>
    Object.entries(bugs).map(([name, t]) => ({ policy, name, t })),
  );
  if (timings.length === 0) {
    lines.push('time to first detection: no run of any policy found a bug');
  } else {
    lines.push(
      `time to first detection (median over all runs, a miss counting as never; then min / median / max of the runs that found it; Â12 that it is found sooner than by ${baseline}):`,
    );
    for (const { policy, name, t } of timings) {
      const label = name === ANY_BUG ? `${name} (the first finding of any kind)` : name;
      lines.push(
        `  ${policy.padEnd(9)} ${label.padEnd(36)} found ${t.found}/${t.runs}  median ${t.medianMs === null ? `> ${secs(result.timeMs)}` : secs(t.medianMs)}  (${secs(t.minMs)} / ${secs(t.medianFoundMs)} / ${secs(t.maxMs)})${t.a12Sooner === undefined ? '' : `  Â12 ${t.a12Sooner.toFixed(2)} p ${(t.p ?? 1).toFixed(3)}`}`,
      );
    }
  }
  lines.push('', `plot: ${result.plot}`, `data: ${result.dir}/compare.json`);
  return lines.join('\n');
}
