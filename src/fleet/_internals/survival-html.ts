import { escapeXml as esc, lineChartSvg, SERIES_COLORS, type Series } from '../../report/plot.js';
import type { FleetGroup } from '../fleet-report-shape.js';
import type { ArmTimeToBug } from '../time-to-bug.js';

const MS_PER_SECOND = 1_000;
/** Columns of the states table: the ends of this many equal parts of the budget. */
const STATE_COLUMNS = 5;
const QUARTILE_STROKE_PX = 1;

function secs(ms: number): string {
  return `${(ms / MS_PER_SECOND).toFixed(1)} s`;
}

function count(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/**
 * A Kaplan–Meier curve as a line's points, in seconds: flat at the share found until each find
 * time, then up (a step), and on to the arm's last campaign end.
 */
function stepPoints(arm: ArmTimeToBug, timeMs: number): [number, number][] {
  const points: [number, number][] = [[0, 0]];
  let share = 0;
  for (const s of arm.steps) {
    points.push([s.atMs / MS_PER_SECOND, share], [s.atMs / MS_PER_SECOND, s.found]);
    share = s.found;
  }
  const lastMs = Math.max(timeMs, ...arm.censoredAtMs, ...arm.steps.map((s) => s.atMs));
  points.push([lastMs / MS_PER_SECOND, share]);
  return points;
}

function color(i: number): string {
  return SERIES_COLORS[i % SERIES_COLORS.length];
}

/** The survival plot, its table, and the states over time of one comparison, for the fleet page. */
export function survivalHtml(group: FleetGroup, timeMs: number): string {
  const t = group.timeToBug;
  if (t === undefined) return '';
  const arms = Object.entries(t.arms);
  const xMax = Math.max(
    timeMs,
    ...arms.flatMap(([, a]) => [...a.censoredAtMs, ...a.steps.map((s) => s.atMs)]),
  );
  const survival = lineChartSvg(
    `Share of campaigns that found ${t.bug}`,
    'time in the campaign',
    'share found',
    arms.map(([arm, a], i): Series => ({ name: arm, points: stepPoints(a, timeMs), color: color(i) })),
    { xTime: true, xMax: xMax / MS_PER_SECOND },
  );
  const rows = arms.map(([arm, a]) => {
    const cells = [
      esc(arm),
      `${a.found}/${a.runs}`,
      a.medianMs === null ? 'not reached' : secs(a.medianMs),
      a.a12Sooner === undefined ? '–' : a.a12Sooner.toFixed(2),
      a.p === undefined ? '–' : `${a.p.toFixed(3)} (${a.pMethod ?? 'exact'})`,
      a.leastP === undefined ? '–' : a.leastP.toPrecision(2),
    ];
    return `<tr data-policy="${esc(arm)}">${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  });
  const parts = [
    `<h3>Time to bug: ${esc(t.bug)}</h3>`,
    `<div class="plot survival">${survival}</div>`,
    `<table class="time-to-bug"><thead><tr><th>policy</th><th>found</th><th>median time to bug</th><th>Â12 sooner than ${esc(t.baseline)}</th><th>p</th><th>least p possible</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table>`,
    `<p class="note">The first finding of any kind, per campaign. Kaplan–Meier: a campaign that ended without finding it is censored at its end; the median is the first time at which half the campaigns are estimated to have found it. ${esc(t.test)}.</p>`,
  ];
  const s = group.states;
  const withRuns = s === undefined ? [] : Object.entries(s.arms).filter(([, a]) => a.runs > 0);
  if (s !== undefined && withRuns.length > 0) {
    const series = withRuns.flatMap(([arm, a]): Series[] => {
      const c = color(arms.findIndex(([name]) => name === arm));
      const line = (pick: (p: (typeof a.points)[number]) => number): [number, number][] =>
        a.points.map((p) => [p.atMs / MS_PER_SECOND, pick(p)]);
      return [
        { name: arm, points: line((p) => p.median), color: c },
        {
          name: `${arm} lower quartile`,
          points: line((p) => p.q1),
          color: c,
          dashed: true,
          legend: false,
          widthPx: QUARTILE_STROKE_PX,
        },
        {
          name: `${arm} upper quartile`,
          points: line((p) => p.q3),
          color: c,
          dashed: true,
          legend: false,
          widthPx: QUARTILE_STROKE_PX,
        },
      ];
    });
    const states = lineChartSvg(
      `Distinct states (${s.metric}): median, dashed the quartiles`,
      'time in the campaign',
      'states',
      series,
      { xTime: true, xMax: timeMs / MS_PER_SECOND },
    );
    const cols = Array.from({ length: STATE_COLUMNS }, (_, i) => (timeMs * (i + 1)) / STATE_COLUMNS);
    const stateRows = withRuns.map(([arm, a]) => {
      const cells = cols.map((c) => {
        const p = a.points.find((q) => Math.abs(q.atMs - c) < 1e-6);
        return p === undefined ? '–' : `${count(p.median)} [${count(p.q1)}–${count(p.q3)}]`;
      });
      return `<tr><td>${esc(arm)}</td><td>${a.runs}</td>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
    });
    parts.push(
      `<h3>Distinct states over time</h3>`,
      `<div class="plot states">${states}</div>`,
      `<table class="states"><thead><tr><th>policy</th><th>campaigns</th>${cols.map((c) => `<th>at ${secs(c)}</th>`).join('')}</tr></thead><tbody>\n${stateRows.join('\n')}\n</tbody></table>`,
      `<p class="note">Median [lower–upper quartile] over the campaigns (a campaign that stopped at its bug holds its last count).</p>`,
    );
  } else if (s !== undefined) {
    parts.push(`<h3>Distinct states over time</h3>`, `<p>No campaign's run database is in this store.</p>`);
  }
  return parts.join('\n');
}
