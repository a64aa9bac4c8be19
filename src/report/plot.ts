import { timeTicks } from '../core/time-axis.js';

/** One line of a plot: (x, y) points in order of x; a point with a non-finite y breaks the line. */
export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
  /** A CSS colour; by default the series' place in the palette. */
  readonly color?: string;
  readonly dashed?: boolean;
  /** Whether the legend names it (default true): false for a line that only frames another. */
  readonly legend?: boolean;
  /** The stroke width in px (default 2). */
  readonly widthPx?: number;
}

/** A shaded interval of x (e.g. a fault window), drawn behind the lines. */
export interface Band {
  readonly from: number;
  readonly to: number;
  /** What the legend calls it, e.g. `kill`; bands of one kind share a colour. */
  readonly kind: string;
  /** The tooltip, e.g. `kill n2 3.1–9.4 s`. */
  readonly label: string;
  readonly color: string;
}

export interface ChartOptions {
  /** The x range shown, from 0; by default the largest x of the series and bands. */
  readonly xMax?: number;
  readonly bands?: readonly Band[];
  /** x is seconds since the run started: ticks read as durations ("3.4 s", "1 min 20 s"). */
  readonly xTime?: boolean;
  /** The chart's width in px (default 720). */
  readonly widthPx?: number;
}

const DEFAULT_WIDTH = 720;
/** At most one x tick label per this many px. */
const X_TICK_SPACING_PX = 90;
const HEIGHT = 360;
const MARGIN = { left: 60, right: 130, top: 30, bottom: 40 };
/** The colour of the i-th series when it names none. */
export const SERIES_COLORS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const STROKE_PX = 2;
const BAND_OPACITY = 0.18;
/** At most this many intervals between axis ticks. */
const MAX_TICKS = 6;
const NICE_STEPS = [1, 2, 2.5, 5, 10];
/** The smallest band drawn, in px, so a fault of a few ms still shows. */
const MIN_BAND_PX = 1.5;

/** A round tick step (1, 2, 2.5 or 5 × 10^k) giving at most `maxTicks` intervals up to `max`. */
export function niceStep(max: number, maxTicks = MAX_TICKS): number {
  const raw = max / maxTicks;
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  return (NICE_STEPS.find((m) => m * magnitude >= raw) ?? 10) * magnitude;
}

/** The tick values 0, step, 2·step, … up to `max`. */
export function ticks(max: number, step: number): number[] {
  const out: number[] = [];
  for (let i = 0; i * step <= max * (1 + 1e-9); i++) out.push(Number((i * step).toPrecision(12)));
  return out;
}

/** The x ticks: round numbers, or round durations when x is seconds of a run. */
function xTicks(
  xMax: number,
  xTime: boolean,
  maxTicks: number,
): { readonly x: number; readonly label: string }[] {
  if (!xTime) return ticks(xMax, niceStep(xMax, maxTicks)).map((x) => ({ x, label: String(x) }));
  return timeTicks(0, xMax * 1000, maxTicks).map((t) => ({ x: t.ms / 1000, label: t.label }));
}

/** Escapes text for HTML and SVG content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The `d` of a path through the points, with a new sub-path after each break (non-finite y). */
function pathData(
  points: readonly (readonly [number, number])[],
  sx: (x: number) => number,
  sy: (y: number) => number,
): string {
  const parts: string[] = [];
  let pen = false;
  for (const [x, y] of points) {
    if (!Number.isFinite(y)) {
      pen = false;
      continue;
    }
    parts.push(`${pen ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`);
    pen = true;
  }
  return parts.join(' ');
}

/**
 * A self-contained SVG line chart (no script, no external resources): `<svg class="plot">` with
 * one `<path class="series">` per series and one `<rect class="band">` per band.
 */
export function lineChartSvg(
  title: string,
  xLabel: string,
  yLabel: string,
  series: readonly Series[],
  options: ChartOptions = {},
): string {
  const bands = options.bands ?? [];
  const WIDTH = options.widthPx ?? DEFAULT_WIDTH;
  const xs = [...series.flatMap((s) => s.points.map((p) => p[0])), ...bands.map((b) => b.to)];
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => Number.isFinite(y));
  const xMax = options.xMax ?? Math.max(1, ...xs);
  const yStep = niceStep(Math.max(1, ...ys));
  const yMax = Math.ceil(Math.max(1, ...ys) / yStep - 1e-9) * yStep;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number): number => MARGIN.left + (Math.min(x, xMax) / xMax) * plotW;
  const sy = (y: number): number => MARGIN.top + plotH - (y / yMax) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="18" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
  ];
  for (const b of bands) {
    const x0 = sx(b.from);
    const w = Math.max(MIN_BAND_PX, sx(b.to) - x0);
    parts.push(
      `<rect class="band" x="${x0.toFixed(1)}" y="${MARGIN.top}" width="${w.toFixed(1)}" height="${plotH}" fill="${b.color}" fill-opacity="${BAND_OPACITY}"><title>${escapeXml(b.label)}</title></rect>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="black"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="black"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 8}" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text x="14" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + plotH / 2})">${escapeXml(yLabel)}</text>`,
  );
  const maxXTicks = Math.max(MAX_TICKS, Math.floor(plotW / X_TICK_SPACING_PX));
  for (const t of xTicks(xMax, options.xTime === true, options.xTime === true ? maxXTicks : MAX_TICKS)) {
    parts.push(
      `<text x="${sx(t.x).toFixed(1)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${escapeXml(t.label)}</text>`,
    );
  }
  for (const yv of ticks(yMax, yStep)) {
    parts.push(
      `<line x1="${MARGIN.left}" y1="${sy(yv).toFixed(1)}" x2="${MARGIN.left + plotW}" y2="${sy(yv).toFixed(1)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 6}" y="${(sy(yv) + 4).toFixed(1)}" text-anchor="end">${yv}</text>`,
    );
  }
  let legendLines = 0;
  series.forEach((s, i) => {
    const color = s.color ?? SERIES_COLORS[i % SERIES_COLORS.length];
    parts.push(
      `<path class="series" d="${pathData(s.points, sx, sy)}" fill="none" stroke="${color}" stroke-width="${s.widthPx ?? STROKE_PX}"${s.dashed ? ' stroke-dasharray="5 3"' : ''}><title>${escapeXml(s.name)}</title></path>`,
    );
    if (s.legend === false) return;
    legendLines++;
    parts.push(
      `<text x="${MARGIN.left + plotW + 10}" y="${MARGIN.top + 16 * legendLines}" fill="${color}">${escapeXml(s.name)}</text>`,
    );
  });
  const legendBands = [...new Map(bands.map((b) => [b.kind, b.color])).entries()];
  legendBands.forEach(([label, color], i) => {
    const y = MARGIN.top + 16 * (legendLines + 1 + i);
    parts.push(
      `<rect x="${MARGIN.left + plotW + 10}" y="${y - 10}" width="12" height="12" fill="${color}" fill-opacity="${BAND_OPACITY * 2}"/>`,
      `<text x="${MARGIN.left + plotW + 26}" y="${y}">${escapeXml(label)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}
