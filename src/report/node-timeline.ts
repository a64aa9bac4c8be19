import type { FaultMark, FaultWindow } from './fault-windows.js';
import { BUG_COLOR, FAMILY_COLORS, MARK_COLOR, ROLE_COLORS } from './colors.js';
import { escapeXml, niceStep, ticks } from './plot.js';
import type { RoleSpan } from './role-spans.js';

export interface NodeTimeline {
  readonly nodes: readonly string[];
  readonly endMs: number;
  readonly windows: readonly FaultWindow[];
  readonly marks: readonly FaultMark[];
  readonly roles: readonly RoleSpan[];
  readonly resetsMs: readonly number[];
  readonly bugs: readonly { readonly id: number; readonly atMs: number; readonly label: string }[];
}

const WIDTH = 960;
const LEFT = 60;
const RIGHT = 20;
const TOP = 30;
const BOTTOM = 40;
const ROW_H = 34;
const FAULT_H = 16;
const ROLE_H = 8;
const TICKS = 8;
const MIN_RECT_PX = 1.5;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * One row per node: its fault windows (coloured by family, a tooltip naming the fault and its
 * times), instantaneous faults as ticks, and below them the roles the node announced (leader in
 * gold); dashed lines at the resets between schedules, red lines where bugs were recorded.
 */
export function nodeTimelineSvg(t: NodeTimeline): string {
  const height = TOP + BOTTOM + ROW_H * Math.max(1, t.nodes.length);
  const plotW = WIDTH - LEFT - RIGHT;
  const xMax = Math.max(1, t.endMs);
  const sx = (ms: number): number => LEFT + (Math.min(Math.max(ms, 0), xMax) / xMax) * plotW;
  const rowY = new Map(t.nodes.map((n, i) => [n, TOP + i * ROW_H]));
  const rect = (
    cls: string,
    fromMs: number,
    toMs: number,
    y: number,
    h: number,
    color: string,
    tip: string,
  ): string =>
    `<rect class="${cls}" x="${sx(fromMs).toFixed(1)}" y="${y}" width="${Math.max(MIN_RECT_PX, sx(toMs) - sx(fromMs)).toFixed(1)}" height="${h}" fill="${color}"><title>${escapeXml(tip)}</title></rect>`;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="18" text-anchor="middle" font-size="14">faults and roles per node</text>`,
  ];
  for (const [node, y] of rowY) {
    parts.push(
      `<text x="${LEFT - 8}" y="${y + FAULT_H}" text-anchor="end">${escapeXml(node)}</text>`,
      `<line x1="${LEFT}" y1="${y + ROW_H - 4}" x2="${LEFT + plotW}" y2="${y + ROW_H - 4}" stroke="#eee"/>`,
    );
  }
  for (const w of t.windows) {
    const y = rowY.get(w.node);
    if (y === undefined) continue;
    parts.push(
      rect(
        'window',
        w.fromMs,
        w.toMs,
        y + 2,
        FAULT_H,
        FAMILY_COLORS[w.family],
        `${w.f} ${w.node} ${seconds(w.fromMs)}–${seconds(w.toMs)} (ended by ${w.endedBy})`,
      ),
    );
  }
  for (const m of t.marks) {
    const y = rowY.get(m.node);
    if (y === undefined) continue;
    const x = sx(m.atMs).toFixed(1);
    parts.push(
      `<line class="mark" x1="${x}" y1="${y}" x2="${x}" y2="${y + FAULT_H + 4}" stroke="${MARK_COLOR}" stroke-width="2"><title>${escapeXml(`${m.f} ${m.node} at ${seconds(m.atMs)}`)}</title></line>`,
    );
  }
  for (const r of t.roles) {
    const y = rowY.get(r.node);
    if (y === undefined) continue;
    parts.push(
      rect(
        'role',
        r.fromMs,
        r.toMs,
        y + FAULT_H + 5,
        ROLE_H,
        ROLE_COLORS[r.role],
        `${r.node} ${r.role} ${seconds(r.fromMs)}–${seconds(r.toMs)}`,
      ),
    );
  }
  const bottom = TOP + ROW_H * Math.max(1, t.nodes.length);
  for (const ms of t.resetsMs) {
    const x = sx(ms).toFixed(1);
    parts.push(
      `<line class="reset" x1="${x}" y1="${TOP - 4}" x2="${x}" y2="${bottom}" stroke="#555" stroke-dasharray="4 3"><title>reset at ${seconds(ms)}</title></line>`,
    );
  }
  for (const b of t.bugs) {
    const x = sx(b.atMs).toFixed(1);
    parts.push(
      `<line class="bug" x1="${x}" y1="${TOP - 4}" x2="${x}" y2="${bottom}" stroke="${BUG_COLOR}" stroke-width="2"><title>${escapeXml(`bug ${b.id} recorded at ${seconds(b.atMs)}: ${b.label}`)}</title></line>`,
      `<text x="${x}" y="${TOP - 6}" text-anchor="middle" fill="${BUG_COLOR}">bug ${b.id}</text>`,
    );
  }
  parts.push(`<line x1="${LEFT}" y1="${bottom}" x2="${LEFT + plotW}" y2="${bottom}" stroke="black"/>`);
  for (const sec of ticks(xMax / 1000, niceStep(xMax / 1000, TICKS))) {
    parts.push(
      `<text x="${sx(sec * 1000).toFixed(1)}" y="${bottom + 16}" text-anchor="middle">${sec}</text>`,
    );
  }
  parts.push(
    `<text x="${LEFT + plotW / 2}" y="${bottom + 32}" text-anchor="middle">time since the run started (s)</text>`,
    '</svg>',
  );
  return parts.join('\n');
}
