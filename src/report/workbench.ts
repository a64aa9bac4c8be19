import { FAMILY_KINDS } from '../core/fault.js';
import { OTHER_FAULT_COLOR } from '../core/fault-colors.js';
import { labelRows } from '../core/label-rows.js';
import { formatTime, timeTicks } from '../core/time-axis.js';
import { describeValue } from '../check/models/value.js';
import { BUG_COLOR, FAMILY_COLORS, MARK_COLOR, OUTCOME_COLORS, ROLE_COLORS } from './colors.js';
import { familyIntervals, type FaultMark, type FaultWindow, type TimedFault } from './fault-windows.js';
import { bucketMsFor } from './op-series.js';
import {
  opFs,
  processLanes,
  rateByF,
  thinBars,
  windowedQuantiles,
  type BarOutcome,
  type OpBar,
} from './op-bars.js';
import { escapeXml, niceStep, ticks } from './plot.js';
import type { RoleSpan } from './role-spans.js';

/** What the workbench draws, on one time axis: ms since the run started. */
export interface WorkbenchInput {
  readonly endMs: number;
  readonly nodes: readonly string[];
  readonly bars: readonly OpBar[];
  readonly faults: readonly TimedFault[];
  readonly windows: readonly FaultWindow[];
  readonly marks: readonly FaultMark[];
  readonly roles: readonly RoleSpan[];
  readonly resetsMs: readonly number[];
  readonly bugs: readonly { readonly id: number; readonly atMs: number; readonly label: string }[];
}

/** The label column, kept in view when the charts scroll sideways. */
const LABEL_PX = 120;
/** The charts' width follows the run: this many px per second, within the bounds below. */
const PX_PER_S = 10;
const MIN_WIDTH_PX = 900;
const MAX_WIDTH_PX = 30_000;
/** One tick label per this many px at most. */
const TICK_SPACING_PX = 110;
const AXIS_H = 22;
const NODE_ROW_H = 22;
const FAULT_LABEL_H = 14;
const LABEL_CHAR_PX = 7.2;
const LABEL_GAP_PX = 6;
const SCATTER_H = 300;
const RATE_H = 200;
const PLOT_PAD = 6;
/** More bars than this and the ok ones are thinned evenly (fail and info all kept). */
const MAX_BARS = 30_000;
/** More scatter points than this and the ok ones are thinned the same way. */
const MAX_POINTS = 60_000;
const QUANTILES = [0.5, 0.95, 0.99] as const;
const QUANTILE_DASH: Readonly<Record<number, string>> = { 0.5: '', 0.95: '6 3', 0.99: '2 3' };
const OUTCOME_DASH: Readonly<Record<string, string>> = { ok: '', fail: '6 3', info: '2 3' };
/** The `f`s' colours (not green, red or orange, which say outcomes on the lanes). */
const F_COLORS = ['#1f77b4', '#9467bd', '#8c564b', '#17becf', '#e377c2', '#7f7f7f', '#bcbd22', '#393b79'];
const OPEN_COLOR = '#999999';
const BAND_OPACITY = 0.13;

/** The width of the charts for a run of `endMs`: PX_PER_S px a second, within [MIN_WIDTH_PX, MAX_WIDTH_PX]. */
export function chartWidthPx(endMs: number): number {
  return Math.round(Math.min(MAX_WIDTH_PX, Math.max(MIN_WIDTH_PX, (endMs / 1000) * PX_PER_S)));
}

/** Closing faults (start, resume, stop-…): their window's end says them; no label of their own. */
const CLOSERS: ReadonlySet<string> = new Set([
  ...Object.values(FAMILY_KINDS).map((kinds) => kinds[kinds.length - 1]),
  'heal-all',
]);

/** A moment in a tooltip: in s from the run's start, to 0.1 s (to 1 ms for an op's ends). */
function time(ms: number, stepMs = 100): string {
  return formatTime(ms, stepMs, Infinity);
}

function num(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

/** A fault's label: what it was and whom it hit (its grudge, else its nodes). */
export function faultLabel(f: TimedFault): string {
  if (f.grudge !== null) return `${f.f} ${f.grudge}`;
  return f.nodes.length > 0 ? `${f.f} ${f.nodes.join(',')}` : f.f;
}

function row(label: string, plot: string, cls = ''): string {
  return `<div class="wb-row ${cls}"><div class="wb-label">${label}</div><div class="wb-plot">${plot}</div></div>`;
}

function labelSvg(height: number, texts: readonly string[]): string {
  return `<svg width="${LABEL_PX}" height="${height}" font-size="11">${texts.join('')}</svg>`;
}

/** A chart whose x is ms since the run started: the zoom script changes its viewBox. */
function zoomSvg(
  cls: string,
  width: number,
  endMs: number,
  height: number,
  content: readonly string[],
): string {
  return [
    `<svg class="zoom ${cls}" data-h="${height}" width="${width}" height="${height}" viewBox="0 0 ${Math.max(1, endMs)} ${height}" preserveAspectRatio="none">`,
    `<g class="grid">${gridLines(0, endMs, width, height)}</g>`,
    ...content,
    '</svg>',
  ].join('');
}

function maxTicks(width: number): number {
  return Math.max(3, Math.floor(width / TICK_SPACING_PX));
}

function gridLines(fromMs: number, toMs: number, width: number, height: number): string {
  return timeTicks(fromMs, toMs, maxTicks(width))
    .map(
      (t) =>
        `<line x1="${t.ms}" x2="${t.ms}" y1="0" y2="${height}" stroke="#eee" vector-effect="non-scaling-stroke"/>`,
    )
    .join('');
}

/** Ticks at the chart's edges are written inward, so that none is cut off. */
const EDGE_PX = 24;
function tickAnchor(x: number, width: number): string {
  return x < EDGE_PX ? 'start' : x > width - EDGE_PX ? 'end' : 'middle';
}

function xAxis(width: number, endMs: number): string {
  const span = Math.max(1, endMs);
  const labels = timeTicks(0, endMs, maxTicks(width)).map((t) => {
    const x = (t.ms / span) * width;
    return `<text x="${x.toFixed(1)}" y="14" text-anchor="${tickAnchor(x, width)}">${escapeXml(t.label)}</text>`;
  });
  return `<svg class="xaxis" width="${width}" height="${AXIS_H}" font-size="11">${labels.join('')}</svg>`;
}

function vLine(cls: string, ms: number, height: number, color: string, tip: string, dash = ''): string {
  return `<line class="${cls}" x1="${ms}" x2="${ms}" y1="0" y2="${height}" stroke="${color}" stroke-width="${cls === 'bug' ? 2 : 1}"${dash ? ` stroke-dasharray="${dash}"` : ''} vector-effect="non-scaling-stroke"><title>${escapeXml(tip)}</title></line>`;
}

/** Resets (dashed) and bugs (red) across a chart. */
function markers(input: WorkbenchInput, height: number): string[] {
  return [
    ...input.resetsMs.map((ms) => vLine('reset', ms, height, '#555', `reset at ${time(ms)}`, '4 3')),
    ...input.bugs.map((b) =>
      vLine('bug', b.atMs, height, BUG_COLOR, `bug ${b.id} recorded at ${time(b.atMs)}: ${b.label}`),
    ),
  ];
}

/** The faults' labels, stacked in rows so that none overlaps another, with the bugs'. */
function faultLabelRow(input: WorkbenchInput, width: number): string {
  const span = Math.max(1, input.endMs);
  const items = [
    ...input.faults
      .filter((f) => f.outcome === 'ok' && !CLOSERS.has(f.f))
      .map((f) => ({
        atMs: f.atMs,
        text: faultLabel(f),
        tip: `${faultLabel(f)} at ${time(f.atMs)} (schedule ${f.schedule + 1}${f.step === null ? '' : `, step ${f.step + 1}`}): ${JSON.stringify(f.value) ?? ''}`,
        color: colorOf(familyOfWindow(input.windows, f)),
        cls: 'fault-label',
      })),
    ...input.bugs.map((b) => ({
      atMs: b.atMs,
      text: `bug ${b.id}`,
      tip: `bug ${b.id}: ${b.label}`,
      color: BUG_COLOR,
      cls: 'bug-label',
    })),
  ];
  // A label near the right edge is drawn leftwards of its moment, so that it is not cut off.
  const x = (ms: number, text: string): number =>
    Math.max(0, Math.min((ms / span) * width, width - text.length * LABEL_CHAR_PX));
  const rows = labelRows(
    items.map((i) => [x(i.atMs, i.text), x(i.atMs, i.text) + i.text.length * LABEL_CHAR_PX] as const),
    LABEL_GAP_PX,
  );
  const height = Math.max(1, rows.length === 0 ? 1 : Math.max(...rows) + 1) * FAULT_LABEL_H + 4;
  const texts = items.map(
    (i, k) =>
      `<text class="${i.cls}" data-ms="${i.atMs}" x="${x(i.atMs, i.text).toFixed(1)}" y="${rows[k] * FAULT_LABEL_H + 11}" fill="${i.color}"><title>${escapeXml(i.tip)}</title>${escapeXml(i.text)}</text>`,
  );
  return row(
    labelSvg(height, [`<text x="4" y="11" fill="#555">faults</text>`]),
    `<svg class="timed fault-labels" width="${width}" height="${height}" font-size="11" font-weight="600">${texts.join('')}</svg>`,
  );
}

function colorOf(family: FaultWindow['family'] | undefined): string {
  return family === undefined ? OTHER_FAULT_COLOR : FAMILY_COLORS[family];
}

/** The family a fault opened a window of, by the windows (a kill, a partition…). */
function familyOfWindow(windows: readonly FaultWindow[], f: TimedFault): FaultWindow['family'] | undefined {
  const family = Object.entries(FAMILY_KINDS).find(([, kinds]) => (kinds as readonly string[]).includes(f.f));
  if (family) return family[0] as FaultWindow['family'];
  return windows.find((w) => w.fromMs === f.atMs)?.family;
}

/** Per node: its fault windows (family colour, grudge in the tooltip), instant faults, roles. */
function nodeRows(input: WorkbenchInput, width: number): string {
  const height = Math.max(1, input.nodes.length) * NODE_ROW_H;
  const y = new Map(input.nodes.map((n, i) => [n, i * NODE_ROW_H]));
  const parts: string[] = [];
  for (const w of input.windows) {
    const top = y.get(w.node);
    if (top === undefined) continue;
    parts.push(
      `<rect class="window" x="${w.fromMs}" y="${top + 2}" width="${Math.max(0, w.toMs - w.fromMs)}" height="12" fill="${FAMILY_COLORS[w.family]}" stroke="${FAMILY_COLORS[w.family]}" vector-effect="non-scaling-stroke"><title>${escapeXml(`${w.f} ${w.node} ${time(w.fromMs)}–${time(w.toMs)} (ended by ${w.endedBy})${w.grudge !== undefined ? `: ${w.grudge}` : ''}`)}</title></rect>`,
    );
  }
  for (const m of input.marks) {
    const top = y.get(m.node);
    if (top === undefined) continue;
    parts.push(
      `<line class="mark" x1="${m.atMs}" x2="${m.atMs}" y1="${top}" y2="${top + 16}" stroke="${MARK_COLOR}" stroke-width="2" vector-effect="non-scaling-stroke"><title>${escapeXml(`${m.f} ${m.node} at ${time(m.atMs)}`)}</title></line>`,
    );
  }
  for (const r of input.roles) {
    const top = y.get(r.node);
    if (top === undefined) continue;
    parts.push(
      `<rect class="role" x="${r.fromMs}" y="${top + 15}" width="${Math.max(0, r.toMs - r.fromMs)}" height="5" fill="${ROLE_COLORS[r.role]}"><title>${escapeXml(`${r.node} ${r.role} ${time(r.fromMs)}–${time(r.toMs)}`)}</title></rect>`,
    );
  }
  const labels = input.nodes.map(
    (n) => `<text x="${LABEL_PX - 8}" y="${(y.get(n) ?? 0) + 13}" text-anchor="end">${escapeXml(n)}</text>`,
  );
  return row(
    labelSvg(height, labels),
    zoomSvg('timeline nodes', width, input.endMs, height, [...parts, ...markers(input, height)]),
  );
}

function barColor(outcome: BarOutcome): string {
  return outcome === 'open' ? OPEN_COLOR : OUTCOME_COLORS[outcome];
}

function barTip(b: OpBar): string {
  const got =
    b.outcome === 'open'
      ? 'never completed'
      : `${b.outcome}${b.result !== undefined && b.outcome === 'ok' ? ` ${describeValue(b.result)}` : ''}${b.error !== undefined ? ` (${b.error})` : ''}`;
  return `process ${b.process}${b.node !== undefined ? ` on ${b.node}` : ''}: ${b.f} ${describeValue(b.value)} → ${got}\n${time(b.startMs, 1)}–${time(b.endMs, 1)}, ${num(b.endMs - b.startMs)} ms`;
}

function laneHeight(lanes: number): number {
  return lanes > 60 ? 8 : lanes > 30 ? 10 : 14;
}

/** Jepsen's timeline: a lane per client process, each op a bar from invoke to completion. */
function lanesRow(input: WorkbenchInput, bars: readonly OpBar[], width: number): string {
  const { laneOf, processes } = processLanes(bars);
  const laneH = laneHeight(processes.length);
  const height = Math.max(1, processes.length) * laneH;
  const bands = familyIntervals(input.windows).map(
    (i) =>
      `<rect class="band" x="${i.fromMs}" y="0" width="${Math.max(0, i.toMs - i.fromMs)}" height="${height}" fill="${FAMILY_COLORS[i.family]}" fill-opacity="${BAND_OPACITY}"><title>${escapeXml(`${i.family} on ${i.nodes.join(', ')}: ${time(i.fromMs)}–${time(i.toMs)}`)}</title></rect>`,
  );
  const rects = bars.map((b) => {
    const c = barColor(b.outcome);
    return `<rect class="bar ${b.outcome}" x="${b.startMs.toFixed(1)}" y="${(laneOf.get(b.process) ?? 0) * laneH + 1}" width="${Math.max(0, b.endMs - b.startMs).toFixed(1)}" height="${laneH - 2}" fill="${c}" stroke="${c}" vector-effect="non-scaling-stroke"><title>${escapeXml(barTip(b))}</title></rect>`;
  });
  const every = laneH >= 12 ? 1 : laneH >= 10 ? 2 : 4;
  const labels = processes
    .map((ps, lane) => ({ ps, lane }))
    .filter(({ lane }) => lane % every === 0)
    .map(
      ({ ps, lane }) =>
        `<text x="${LABEL_PX - 8}" y="${lane * laneH + laneH - 2}" text-anchor="end" font-size="${Math.min(11, laneH)}"><title>processes ${ps.join(', ')}</title>${ps.length === 1 ? `process ${ps[0]}` : `processes ${ps[0]}…${ps[ps.length - 1]}`}</text>`,
    );
  return row(
    labelSvg(height, labels),
    zoomSvg('lanes', width, input.endMs, height, [...bands, ...rects, ...markers(input, height)]).replace(
      '<svg class="zoom lanes"',
      `<svg class="zoom lanes" data-lanes="${processes.length}" data-processes="${laneOf.size}"`,
    ),
  );
}

function fColor(fs: readonly string[], f: string): string {
  return F_COLORS[Math.max(0, fs.indexOf(f)) % F_COLORS.length];
}

/** Every op's latency by its completion time, on a log axis, with windowed quantiles of the ok ones. */
function scatterRow(
  input: WorkbenchInput,
  bars: readonly OpBar[],
  fs: readonly string[],
  width: number,
): string {
  const done = bars.filter((b) => b.outcome !== 'open');
  const latencies = done.map((b) => Math.max(b.endMs - b.startMs, 0));
  const positive = latencies.filter((l) => l > 0);
  const lo = Math.floor(Math.log10(Math.max(0.01, positive.length > 0 ? Math.min(...positive) : 1)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(1, ...latencies))));
  const plotH = SCATTER_H - 2 * PLOT_PAD;
  const sy = (ms: number): number =>
    PLOT_PAD + (1 - (Math.log10(Math.max(ms, 10 ** lo)) - lo) / (hi - lo)) * plotH;
  const groups = new Map<string, string[]>();
  done.forEach((b, i) => {
    const key = `${b.f}\0${b.outcome}`;
    const y = sy(latencies[i]).toFixed(1);
    const x = b.endMs.toFixed(1);
    const d = b.outcome === 'info' ? `M${x},${(Number(y) - 4).toFixed(1)}v8` : `M${x},${y}h0`;
    const list = groups.get(key) ?? [];
    list.push(d);
    groups.set(key, list);
  });
  const points = [...groups.entries()].map(([key, ds]) => {
    const [f, outcome] = key.split('\0');
    const cap = outcome === 'ok' ? 'round' : outcome === 'fail' ? 'square' : 'butt';
    const w = outcome === 'info' ? 1.5 : 4;
    return `<path class="points ${outcome}" data-f="${escapeXml(f)}" data-n="${ds.length}" d="${ds.join('')}" fill="none" stroke="${fColor(fs, f)}" stroke-width="${w}" stroke-linecap="${cap}" stroke-opacity="0.6" vector-effect="non-scaling-stroke"><title>${escapeXml(`${f} ${outcome}: ${ds.length} ops`)}</title></path>`;
  });
  const windowMs = bucketMsFor(input.endMs);
  const ok = bars
    .filter((b) => b.outcome === 'ok')
    .map((b) => ({ atMs: b.endMs, latencyMs: b.endMs - b.startMs }));
  const quantiles = windowedQuantiles(ok, input.endMs, windowMs, QUANTILES).map(
    ({ quantile, points: qs }) => {
      const d: string[] = [];
      let pen = false;
      for (const [x, v] of qs) {
        if (!Number.isFinite(v)) {
          pen = false;
          continue;
        }
        d.push(`${pen ? 'L' : 'M'}${x.toFixed(1)},${sy(v).toFixed(1)}`);
        pen = true;
      }
      const dash = QUANTILE_DASH[quantile];
      return `<path class="quantile" data-q="${quantile}" d="${d.join(' ')}" fill="none" stroke="#222" stroke-width="1.5"${dash ? ` stroke-dasharray="${dash}"` : ''} vector-effect="non-scaling-stroke"><title>p${Math.round(quantile * 100)} of ok latencies per ${time(windowMs)}</title></path>`;
    },
  );
  const decades = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
  const grid = decades.map(
    (v) =>
      `<line x1="0" x2="${Math.max(1, input.endMs)}" y1="${sy(v).toFixed(1)}" y2="${sy(v).toFixed(1)}" stroke="#ddd" vector-effect="non-scaling-stroke"/>`,
  );
  const labels = decades.map(
    (v) =>
      `<text x="${LABEL_PX - 8}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end">${escapeXml(formatTime(v, v))}</text>`,
  );
  return row(
    labelSvg(SCATTER_H, [
      ...labels,
      `<text x="12" y="${SCATTER_H / 2}" text-anchor="middle" transform="rotate(-90 12 ${SCATTER_H / 2})">latency (log)</text>`,
    ]),
    zoomSvg('scatter', width, input.endMs, SCATTER_H, [
      ...grid,
      ...points,
      ...quantiles,
      ...markers(input, SCATTER_H),
    ]),
  );
}

/** Ops completed per second, per `f` and outcome. */
function rateRow(
  input: WorkbenchInput,
  bars: readonly OpBar[],
  fs: readonly string[],
  width: number,
): string {
  const windowMs = bucketMsFor(input.endMs);
  const series = rateByF(bars, input.endMs, windowMs);
  const max = Math.max(1, ...series.flatMap((s) => s.points.map(([, v]) => v)));
  const step = niceStep(max, 4);
  const yMax = Math.ceil(max / step - 1e-9) * step;
  const plotH = RATE_H - 2 * PLOT_PAD;
  const sy = (v: number): number => PLOT_PAD + (1 - v / yMax) * plotH;
  const lines = series.map((s) => {
    const dash = OUTCOME_DASH[s.outcome];
    return `<path class="rate" data-f="${escapeXml(s.f)}" data-outcome="${s.outcome}" d="${s.points.map(([x, v], i) => `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${sy(v).toFixed(1)}`).join(' ')}" fill="none" stroke="${fColor(fs, s.f)}" stroke-width="1.5"${dash ? ` stroke-dasharray="${dash}"` : ''} vector-effect="non-scaling-stroke"><title>${escapeXml(`${s.f} ${s.outcome} ops/s (per ${time(windowMs)})`)}</title></path>`;
  });
  const yTicks = ticks(yMax, step);
  const grid = yTicks.map(
    (v) =>
      `<line x1="0" x2="${Math.max(1, input.endMs)}" y1="${sy(v).toFixed(1)}" y2="${sy(v).toFixed(1)}" stroke="#ddd" vector-effect="non-scaling-stroke"/>`,
  );
  const labels = yTicks.map(
    (v) => `<text x="${LABEL_PX - 8}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`,
  );
  return row(
    labelSvg(RATE_H, [
      ...labels,
      `<text x="12" y="${RATE_H / 2}" text-anchor="middle" transform="rotate(-90 12 ${RATE_H / 2})">ops/s</text>`,
    ]),
    zoomSvg('rate', width, input.endMs, RATE_H, [...grid, ...lines, ...markers(input, RATE_H)]),
  );
}

function swatch(color: string, text: string, style = ''): string {
  return `<span class="sw"><i style="background:${color};${style}"></i>${escapeXml(text)}</span>`;
}

function axisRow(width: number, endMs: number): string {
  return row('', xAxis(width, endMs), 'wb-axis');
}

export const WORKBENCH_STYLE = `
#wb .wb-controls { margin: 0.5em 0; font-size: 0.9em; }
#wb .wb-controls input { width: 6em; }
#wb .wb-scroll { overflow-x: auto; border: 1px solid #ddd; }
#wb .wb-row { display: flex; width: max-content; }
#wb .wb-label { position: sticky; left: 0; background: white; z-index: 1; width: ${LABEL_PX}px; flex: none; border-right: 1px solid #ccc; }
#wb .wb-plot svg { display: block; }
#wb svg.zoom { cursor: crosshair; }
#wb h3 { font-size: 1em; margin: 0.6em 0 0.2em; position: sticky; left: 0; width: max-content; }
#wb .sw { margin-right: 12px; white-space: nowrap; }
#wb .sw i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: middle; }
#wb .brush { fill: #1565c0; fill-opacity: 0.15; }
`;

/**
 * The zoom: a time range (the inputs, the buttons, or a drag across any chart) shown on every
 * chart at once. Each chart's viewBox takes the range; the axes' labels are written again with the
 * page's own tick rules (their source is carried here); at the whole run the charts have their
 * full width (scroll sideways), zoomed in they fit the window.
 */
export const WORKBENCH_SCRIPT = `
(() => {
  const wb = document.getElementById('wb');
  if (!wb) return;
  // A transpiler that keeps function names may wrap inner functions in __name(…).
  const __name = (f) => f;
  const formatTime = ${formatTime.toString()};
  const timeTicks = ${timeTicks.toString()};
  const end = Number(wb.dataset.endMs);
  const scroller = wb.querySelector('.wb-scroll');
  // A short run's charts fill the box at least.
  const fullWidth = Math.max(Number(wb.dataset.width), scroller.clientWidth - ${LABEL_PX} - 4);
  const fromInput = document.getElementById('wb-from');
  const toInput = document.getElementById('wb-to');
  const ns = 'http://www.w3.org/2000/svg';
  let from = 0;
  let to = end;
  const widthNow = () => (from <= 0 && to >= end ? fullWidth : Math.max(400, scroller.clientWidth - ${LABEL_PX} - 4));
  let apply = () => {
    const w = widthNow();
    const span = Math.max(1e-6, to - from);
    const ticks = timeTicks(from, to, Math.max(3, Math.floor(w / ${TICK_SPACING_PX})));
    for (const svg of wb.querySelectorAll('svg.zoom')) {
      svg.setAttribute('viewBox', from + ' 0 ' + span + ' ' + svg.dataset.h);
      svg.setAttribute('width', String(w));
      const grid = svg.querySelector('g.grid');
      grid.replaceChildren(...ticks.map((t) => {
        const l = document.createElementNS(ns, 'line');
        for (const [k, v] of [['x1', t.ms], ['x2', t.ms], ['y1', 0], ['y2', svg.dataset.h], ['stroke', '#eee'], ['vector-effect', 'non-scaling-stroke']]) l.setAttribute(k, String(v));
        return l;
      }));
    }
    for (const svg of wb.querySelectorAll('svg.timed')) {
      svg.setAttribute('width', String(w));
      for (const el of svg.querySelectorAll('[data-ms]')) {
        const x = ((Number(el.dataset.ms) - from) / span) * w;
        // A label near the right edge is drawn leftwards of its moment, so that it is not cut off.
        el.setAttribute('x', Math.max(0, Math.min(x, w - el.getComputedTextLength() - 2)).toFixed(1));
        el.style.display = x < -2 || x > w ? 'none' : '';
      }
    }
    for (const svg of wb.querySelectorAll('svg.xaxis')) {
      svg.setAttribute('width', String(w));
      svg.replaceChildren(...ticks.map((t) => {
        const text = document.createElementNS(ns, 'text');
        text.setAttribute('x', (((t.ms - from) / span) * w).toFixed(1));
        text.setAttribute('y', '14');
        const x = ((t.ms - from) / span) * w;
        text.setAttribute('text-anchor', x < ${EDGE_PX} ? 'start' : x > w - ${EDGE_PX} ? 'end' : 'middle');
        text.textContent = t.label;
        return text;
      }));
    }
    fromInput.value = (from / 1000).toFixed(1);
    toInput.value = (to / 1000).toFixed(1);
    wb.dataset.from = String(from);
    wb.dataset.to = String(to);
    wb.dataset.ticks = ticks.map((t) => t.label).join('|');
  };
  const zoomTo = (a, b) => {
    const lo = Math.max(0, Math.min(a, b));
    const hi = Math.min(end, Math.max(a, b));
    if (hi - lo < 1) return;
    from = lo;
    to = hi;
    apply();
  };
  wb.zoomTo = zoomTo;
  const scale = (k) => {
    const mid = (from + to) / 2;
    const half = ((to - from) * k) / 2;
    zoomTo(Math.max(0, mid - half), Math.min(end, mid + half));
  };
  document.getElementById('wb-in').addEventListener('click', () => scale(0.5));
  document.getElementById('wb-out').addEventListener('click', () => scale(2));
  document.getElementById('wb-all').addEventListener('click', () => zoomTo(0, end));
  const fromFields = () => zoomTo(Number(fromInput.value) * 1000, Number(toInput.value) * 1000);
  fromInput.addEventListener('change', fromFields);
  toInput.addEventListener('change', fromFields);
  let dragStart = null;
  const msAt = (svg, clientX) => {
    const box = svg.getBoundingClientRect();
    return from + ((clientX - box.left) / box.width) * (to - from);
  };
  for (const svg of wb.querySelectorAll('svg.zoom')) {
    svg.addEventListener('mousedown', (e) => { dragStart = { svg, x: e.clientX }; e.preventDefault(); });
  }
  window.addEventListener('mouseup', (e) => {
    if (!dragStart) return;
    const { svg, x } = dragStart;
    dragStart = null;
    if (Math.abs(e.clientX - x) > 4) zoomTo(msAt(svg, x), msAt(svg, e.clientX));
  });
  apply();
  // A range in the address (report.html#zoom=12.5-20, in s) opens zoomed, and each zoom is kept there.
  const asked = /zoom=([0-9.]+)-([0-9.]+)/.exec(location.hash);
  if (asked) zoomTo(Number(asked[1]) * 1000, Number(asked[2]) * 1000);
  const keep = apply;
  apply = () => {
    keep();
    const whole = from <= 0 && to >= end;
    if (!whole) history.replaceState(null, '', '#zoom=' + (from / 1000).toFixed(1) + '-' + (to / 1000).toFixed(1));
    else if (location.hash.startsWith('#zoom=')) history.replaceState(null, '', location.pathname);
  };
})();`;

/**
 * Jepsen's views of a run on one zoomable time axis: the faults (labelled with whom they hit,
 * stacked so none overlaps), each node's fault windows and roles, a lane per client process with
 * each op a bar from invoke to completion (Jepsen's timeline), every op's latency on a log axis
 * with p50/p95/p99 lines (Jepsen's latency-raw), and the rate of ops per `f` and outcome.
 */
export function workbenchHtml(input: WorkbenchInput): string {
  const width = chartWidthPx(input.endMs);
  const fs = opFs(input.bars);
  const lanes = thinBars(input.bars, MAX_BARS);
  const scatter = thinBars(input.bars, MAX_POINTS);
  const notes = [
    lanes.leftOut > 0
      ? `The lanes show ${lanes.bars.length} of ${input.bars.length} ops: every fail and info, and ok ones taken evenly across the run.`
      : '',
    scatter.leftOut > 0
      ? `The latency plot shows ${scatter.bars.length} of ${input.bars.length} ops, thinned the same way.`
      : '',
  ].filter((n) => n !== '');
  const fKey = fs.map((f) => swatch(fColor(fs, f), f)).join('');
  return [
    `<h2 id="workbench">Timeline, latency and rate</h2>`,
    `<div id="wb" data-end-ms="${input.endMs}" data-width="${width}">`,
    `<p>Times from the run's start. Drag across any chart to zoom to that range (every chart follows); scroll sideways at the whole run. Hover a bar, window or line for what it is.</p>`,
    `<div class="wb-controls">from <input id="wb-from" type="number" step="any" min="0"> s to <input id="wb-to" type="number" step="any" min="0"> s <button id="wb-in">zoom in</button> <button id="wb-out">zoom out</button> <button id="wb-all">whole run</button></div>`,
    ...notes.map((n) => `<p class="none">${escapeXml(n)}</p>`),
    '<div class="wb-scroll">',
    '<h3>Faults and nodes</h3>',
    faultLabelRow(input, width),
    nodeRows(input, width),
    axisRow(width, input.endMs),
    '<h3>Ops by client process (Jepsen timeline; a process retired after an info op hands its lane to the next)</h3>',
    lanesRow(input, lanes.bars, width),
    axisRow(width, input.endMs),
    '<h3>Latency of every op (log axis), with p50, p95, p99 of ok ops</h3>',
    scatterRow(input, scatter.bars, fs, width),
    axisRow(width, input.endMs),
    '<h3>Ops per second, by f and outcome</h3>',
    rateRow(input, input.bars, fs, width),
    axisRow(width, input.endMs),
    '</div>',
    `<p class="wb-key">faults: ${Object.entries(FAMILY_COLORS)
      .map(([family, c]) => swatch(c, family))
      .join('')}${swatch(MARK_COLOR, 'instant fault', 'width:3px')} roles: ${Object.entries(ROLE_COLORS)
      .map(([r, c]) => swatch(c, r))
      .join(
        '',
      )}${swatch(BUG_COLOR, 'bug recorded', 'width:3px')}${swatch('#555', 'reset between schedules', 'width:2px')}</p>`,
    `<p class="wb-key">ops on the lanes: ${(['ok', 'fail', 'info', 'open'] as const).map((o) => swatch(barColor(o), o === 'open' ? 'never completed' : o)).join('')}</p>`,
    `<p class="wb-key">latency and rate, by f: ${fKey} — latency: ● ok, ■ fail, | info (timed out, outcome unknown); lines: solid p50, dashed p95, dotted p99. Rate: solid ok, dashed fail, dotted info.</p>`,
    '</div>',
  ].join('\n');
}
