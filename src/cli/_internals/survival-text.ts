import type { FleetGroup } from '../../fleet/fleet-report.js';
import { foundBy } from '../../report/survival.js';

/** Columns of the share-found and states rows: the ends of this many equal parts of the budget. */
const TIME_COLUMNS = 5;
const MS_PER_MINUTE = 60_000;
const MS_PER_SECOND = 1_000;

/** A time as a column heads it: `2 min`, `7.5 s`. */
export function clockLabel(ms: number): string {
  return ms >= MS_PER_MINUTE
    ? `${Number((ms / MS_PER_MINUTE).toFixed(1))} min`
    : `${Number((ms / MS_PER_SECOND).toFixed(1))} s`;
}

function secs(ms: number): string {
  return `${(ms / MS_PER_SECOND).toFixed(1)} s`;
}

function columnTimes(timeMs: number): number[] {
  return Array.from({ length: TIME_COLUMNS }, (_, i) => (timeMs * (i + 1)) / TIME_COLUMNS);
}

function countText(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/**
 * A comparison's time to bug (per policy: found/total, the Kaplan–Meier median, Â12 and p against
 * the baseline, the share found at fifths of the budget) and its distinct states over time (median
 * and interquartile range), as `fleet report` prints them.
 */
export function survivalText(group: FleetGroup, timeMs: number): string[] {
  const t = group.timeToBug;
  if (t === undefined) return [];
  const arms = Object.entries(t.arms);
  const width = Math.max(9, ...arms.map(([a]) => a.length));
  const cols = columnTimes(timeMs);
  const lines = [
    `time to bug (${t.bug}: the first finding of any kind; Kaplan–Meier, a campaign that ended without it censored at its end):`,
    `  ${'policy'.padEnd(width)} ${'found'.padStart(7)} ${'median'.padStart(12)} ${'Â12'.padStart(5)} ${`p vs ${t.baseline}`.padStart(10)}`,
  ];
  for (const [arm, a] of arms) {
    const vs =
      a.a12Sooner === undefined || a.p === undefined
        ? ''
        : ` ${a.a12Sooner.toFixed(2).padStart(5)} ${a.p.toFixed(3).padStart(10)} (${a.pMethod ?? 'exact'}; least possible ${(a.leastP ?? 0).toPrecision(2)})`;
    lines.push(
      `  ${arm.padEnd(width)} ${`${a.found}/${a.runs}`.padStart(7)} ${(a.medianMs === null ? 'not reached' : secs(a.medianMs)).padStart(12)}${vs}`,
    );
  }
  lines.push(
    `  share of campaigns that found it by ${cols.map(clockLabel).join(', ')}:`,
    ...arms.map(
      ([arm, a]) =>
        `  ${arm.padEnd(width)} ${cols.map((c) => foundBy(a.steps, c).toFixed(2).padStart(6)).join(' ')}`,
    ),
    `  (${t.test})`,
  );
  const s = group.states;
  if (s !== undefined && !Object.values(s.arms).some((a) => a.runs > 0)) {
    lines.push(`distinct states over time: no campaign's run database is in this store`);
  } else if (s !== undefined) {
    lines.push(
      `distinct states (${s.metric}) over time, median [lower–upper quartile] over the campaigns, at ${cols.map(clockLabel).join(', ')}:`,
    );
    for (const [arm, a] of Object.entries(s.arms)) {
      if (a.runs === 0) continue;
      const at = cols.map((c) => a.points.find((p) => Math.abs(p.atMs - c) < 1e-6));
      lines.push(
        `  ${arm.padEnd(width)} ${at.map((p) => (p === undefined ? '-' : `${countText(p.median)} [${countText(p.q1)}–${countText(p.q3)}]`).padStart(14)).join(' ')}  (${a.runs} campaign${a.runs === 1 ? '' : 's'})`,
      );
    }
  }
  return lines;
}
