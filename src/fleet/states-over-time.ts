import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { median, quantile } from '../report/stats.js';
import { readStoredMetrics } from '../store/run-reader.js';

/** The coverage the report follows over time: distinct states of the causal abstraction. */
export const STATES_METRIC = 'states_causal';
/** Intervals the budget is cut into: the curve is sampled at their ends (and at 0). */
export const STATES_INTERVALS = 20;
const LOWER_QUARTILE = 0.25;
const UPPER_QUARTILE = 0.75;

export interface StatesPoint {
  readonly atMs: number;
  readonly median: number;
  /** The lower and upper quartiles over the campaigns (type 7, see `quantile`). */
  readonly q1: number;
  readonly q3: number;
}

export interface ArmStates {
  /** Campaigns whose run database could be read (a store copied without its runs has none). */
  readonly runs: number;
  readonly points: readonly StatesPoint[];
}

export interface StatesOverTime {
  readonly metric: string;
  readonly arms: Readonly<Record<string, ArmStates>>;
}

/** The metric's per-step samples of one run, in time order; undefined when unreadable. */
function readCurve(runDir: string): (readonly [number, number])[] | undefined {
  if (!existsSync(join(runDir, 'run.db'))) return undefined;
  try {
    return readStoredMetrics(runDir).map((r) => [r.atMs, r.values[STATES_METRIC] ?? 0] as const);
  } catch {
    return undefined;
  }
}

/** A run's count at `atMs`: its last sample at or before it (0 before the first; a run that stopped holds its last). */
function valueAt(curve: readonly (readonly [number, number])[], atMs: number): number {
  let v = 0;
  for (const [t, y] of curve) {
    if (t > atMs) break;
    v = y;
  }
  return v;
}

/** Per arm, the distinct states of its campaigns over [0, timeMs]: median and quartiles at each sample. */
export function statesOverTime(
  runDirsByArm: Readonly<Record<string, readonly string[]>>,
  timeMs: number,
): StatesOverTime {
  const arms: Record<string, ArmStates> = {};
  for (const [arm, dirs] of Object.entries(runDirsByArm)) {
    const curves = dirs.map(readCurve).filter((c) => c !== undefined);
    const points: StatesPoint[] = [];
    if (curves.length > 0) {
      for (let i = 0; i <= STATES_INTERVALS; i++) {
        const atMs = (timeMs * i) / STATES_INTERVALS;
        const values = curves.map((c) => valueAt(c, atMs));
        points.push({
          atMs,
          median: median(values),
          q1: quantile(values, LOWER_QUARTILE),
          q3: quantile(values, UPPER_QUARTILE),
        });
      }
    }
    arms[arm] = { runs: curves.length, points };
  }
  return { metric: STATES_METRIC, arms };
}
