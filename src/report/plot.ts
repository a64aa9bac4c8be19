/** One line of a coverage plot: (x, y) points in order of x. */
export interface Series {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

const WIDTH = 720;
const HEIGHT = 360;
const MARGIN = { left: 60, right: 130, top: 30, bottom: 40 };
const COLORS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A self-contained SVG line chart (no script, no external resources). */
export function lineChartSvg(
  title: string,
  xLabel: string,
  yLabel: string,
  series: readonly Series[],
): string {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMax = Math.max(1, ...xs);
  const yMax = Math.max(1, ...ys);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const sx = (x: number): number => MARGIN.left + (x / xMax) * plotW;
  const sy = (y: number): number => MARGIN.top + plotH - (y / yMax) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="18" text-anchor="middle" font-size="14">${escape(title)}</text>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="black"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="black"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 8}" text-anchor="middle">${escape(xLabel)}</text>`,
    `<text x="14" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + plotH / 2})">${escape(yLabel)}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const xv = (xMax * i) / 4;
    const yv = (yMax * i) / 4;
    parts.push(
      `<text x="${sx(xv)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${Number(xv.toFixed(1))}</text>`,
      `<text x="${MARGIN.left - 6}" y="${sy(yv) + 4}" text-anchor="end">${Number(yv.toFixed(1))}</text>`,
    );
  }
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const d = s.points
      .map((p, j) => `${j === 0 ? 'M' : 'L'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${color}" stroke-width="2"><title>${escape(s.name)}</title></path>`,
      `<text x="${MARGIN.left + plotW + 10}" y="${MARGIN.top + 16 * (i + 1)}" fill="${color}">${escape(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}
