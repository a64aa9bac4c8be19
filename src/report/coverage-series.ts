import type { StoredMetrics } from '../store/run-reader.js';
import type { Series } from './plot.js';

/**
 * Coverage metrics over the run, one series per metric, as `[s since the run started, value]`
 * starting from (0, 0); metrics are recorded at the end of each step. `names` picks the metrics,
 * in order; metrics no row has are left out.
 */
export function coverageSeries(rows: readonly StoredMetrics[], names: (metric: string) => boolean): Series[] {
  const metrics = [...new Set(rows.flatMap((r) => Object.keys(r.values)))].filter(names).sort();
  return metrics.map((name) => ({
    name,
    points: [
      [0, 0] as const,
      ...rows
        .filter((r) => typeof r.values[name] === 'number')
        .map((r) => [r.atMs / 1000, r.values[name]] as const),
    ],
  }));
}
