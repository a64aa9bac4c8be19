import { NS_PER_MS } from '../core/clock.js';
import { faultColor } from '../core/fault-colors.js';
import { labelRows } from '../core/label-rows.js';
import { type Op, pairOps } from '../core/op.js';
import { timeTicks } from '../core/time-axis.js';
import { escapeHtml } from './_internals/escape-html.js';
import { exactJson } from '../core/exact-json.js';
import type { LinearizabilityResult } from './linearizable.js';
import { canonicalKey, describeCanonical, describeValue } from './models/value.js';

const MAX_INTERVALS = 2000;
const AXIS_WIDTH_PX = 1100;
const LABEL_WIDTH_PX = 110;
const ROW_HEIGHT_PX = 24;
const BAR_HEIGHT_PX = 14;
const AXIS_HEIGHT_PX = 30;
const AXIS_TICKS = 10;
const RIGHT_MARGIN_PX = 60;
const FAULT_ROW_PX = 14;
/** The width of a fault label's character, to keep labels apart (11 px sans-serif). */
const LABEL_CHAR_PX = 6.2;
const LABEL_GAP_PX = 8;

export interface HtmlOptions {
  readonly title?: string;
  /** What the violation is, in words (e.g. a named register anomaly), shown under the verdict. */
  readonly explanations?: readonly string[];
  /**
   * The grudge of each nemesis op that acted on links, by op index (the sides of a partition,
   * `n1,n3 | n2`; the target of a packet fault): shown in the fault's label and tooltip.
   */
  readonly grudges?: ReadonlyMap<number, string>;
}

/** One client op: invoke to completion (an `info` or unfinished op runs to the end of the axis). */
interface Interval {
  readonly process: number;
  readonly invoke: Op;
  readonly complete: Op | undefined;
  readonly start: number;
  readonly end: number;
}

interface FaultInterval {
  readonly f: string;
  readonly value: unknown;
  readonly start: number;
  readonly end: number;
  /** The index of the op that says what the fault acted on (its completion). */
  readonly index: number;
}

const FAULT_PAIRS: Readonly<Record<string, string>> = {
  kill: 'start',
  pause: 'resume',
  'member-remove': 'member-add',
};

/** [min, max] of the times, or the fallbacks when there are none (no spread: histories are long). */
function timeRange(times: readonly number[], emptyMin: number, emptyMax: number): [number, number] {
  if (times.length === 0) return [emptyMin, emptyMax];
  let min = Infinity;
  let max = -Infinity;
  for (const t of times) {
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return [min, max];
}

/**
 * The axis ticks: times are ns since the run started in our histories, labelled as durations from
 * there ("3.4 s", "1 min 20 s"); a history without times (Jepsen log lines) has op positions.
 */
function axisTicks(viewStart: number, viewEnd: number): { readonly at: number; readonly label: string }[] {
  if (viewEnd - viewStart >= NS_PER_MS) {
    return timeTicks(viewStart / NS_PER_MS, viewEnd / NS_PER_MS, AXIS_TICKS).map((t) => ({
      at: t.ms * NS_PER_MS,
      label: t.label,
    }));
  }
  const span = viewEnd - viewStart;
  return Array.from({ length: AXIS_TICKS + 1 }, (_, i) => {
    const at = viewStart + (span * i) / AXIS_TICKS;
    return { at, label: `t=${at.toFixed(0)}` };
  });
}

const NS_PER_S = 1_000_000_000;
/** An op's times are given to the ms: what a tick step of 10 ms shows. */
const OP_TIME_STEP_NS = 10 * NS_PER_MS;

/**
 * A time of the history as the page shows it: ours (and Jepsen's `:time`) are ns since the run
 * started, shown in seconds since the run started, as the terminal and the report show them, with
 * one decimal more than ticks `step` ns apart need to differ (at least one); a history without
 * times (Jepsen log lines) has op positions.
 */
function timeLabel(t: number, span: number, step: number): string {
  if (span < NS_PER_MS) return `t=${t.toFixed(0)}`;
  const decimals = Math.min(4, Math.max(1, Math.ceil(-Math.log10(step / NS_PER_S)) + 1));
  return `${(t / NS_PER_S).toFixed(decimals)} s`;
}

/** Client ops as intervals: a failed op did not happen; one with no answer lasts to `end`. */
function pairIntervals(ops: readonly Op[], end: number): Interval[] {
  return pairOps(ops)
    .filter(({ completion }) => completion?.type !== 'fail')
    .map(({ invoke, completion }) => ({
      process: invoke.process as number,
      invoke,
      complete: completion,
      start: invoke.time,
      end: completion === undefined || completion.type === 'info' ? end : completion.time,
    }));
}

function closerOf(f: string): string | undefined {
  if (f.startsWith('start-')) return `stop-${f.slice('start-'.length)}`;
  return FAULT_PAIRS[f];
}

/**
 * The nemesis ops that each stand for one fault. A Jepsen history invokes a fault and completes
 * it: its completions. Ours writes each fault twice, both `info`: what was asked (`halves`), then
 * what it acted on (the nodes); the pair is one fault, at the time it was asked, with the value
 * and index of its completion.
 */
function faultEvents(faults: readonly Op[]): Op[] {
  const nemesis = faults.filter((op) => op.process === 'nemesis');
  const completions = nemesis.filter((op) => op.type !== 'invoke');
  if (completions.length === 0) return nemesis;
  if (completions.length < nemesis.length) return completions;
  const events: Op[] = [];
  for (let i = 0; i < nemesis.length; i++) {
    const op = nemesis[i];
    const next = nemesis[i + 1] as Op | undefined;
    if (next !== undefined && next.f === op.f && op.error === undefined) {
      events.push({ ...next, time: op.time });
      i++;
    } else {
      events.push(op);
    }
  }
  return events;
}

/** Nemesis ops as shaded intervals: start-X to stop-X, kill to start, pause to resume. */
function faultIntervals(faults: readonly Op[], end: number): FaultInterval[] {
  const open = new Map<string, Op>();
  const intervals: FaultInterval[] = [];
  for (const op of faultEvents(faults)) {
    const opener = [...open.entries()].find(([, started]) => closerOf(started.f) === op.f);
    if (opener !== undefined) {
      open.delete(opener[0]);
      const o = opener[1];
      intervals.push({ f: o.f, value: o.value, start: o.time, end: op.time, index: o.index });
    } else if (closerOf(op.f) !== undefined) {
      // A new partition or packet fault replaces the one in force: it ends where this begins.
      const replaced = op.f.startsWith('start-')
        ? [...open.entries()].find(([, o]) => o.f === op.f)
        : undefined;
      if (replaced !== undefined) {
        open.delete(replaced[0]);
        const o = replaced[1];
        intervals.push({ f: o.f, value: o.value, start: o.time, end: op.time, index: o.index });
      }
      open.set(`${op.f}#${op.index}`, op);
    } else {
      intervals.push({ f: op.f, value: op.value, start: op.time, end: op.time, index: op.index });
    }
  }
  for (const op of open.values()) {
    intervals.push({ f: op.f, value: op.value, start: op.time, end, index: op.index });
  }
  return intervals.sort((a, b) => a.start - b.start);
}

/** A fault's label: what it was and whom it hit (its grudge, else its value). */
function faultLabel(fault: FaultInterval, grudge: string | undefined): string {
  if (grudge !== undefined) return `${fault.f} ${grudge}`;
  const v = fault.value;
  if (typeof v === 'string') return `${fault.f} ${v}`;
  if (Array.isArray(v) && v.every((n) => typeof n === 'string')) return `${fault.f} ${v.join(',')}`;
  return v === null || v === undefined ? fault.f : `${fault.f} ${exactJson(v)}`;
}

function sameKey(value: unknown, key: string | number | bigint): boolean {
  return Array.isArray(value) && value.length === 2 && canonicalKey(value[0]) === key;
}

/** What to print on a bar: a read's result, otherwise what the op was asked to do. */
function shortValue(interval: Interval, withoutKey: boolean): string {
  const { invoke, complete } = interval;
  let value: unknown = invoke.f === 'read' && complete?.type === 'ok' ? complete.value : invoke.value;
  if (withoutKey && Array.isArray(value) && value.length === 2) value = value[1];
  const text = describeValue(value);
  return text.length > 24 ? `${text.slice(0, 23)}…` : text;
}

function describeInterval(
  interval: Interval,
  order: number | undefined,
  failing: boolean,
  at: (t: number) => string,
): string {
  const { invoke, complete } = interval;
  const outcome =
    complete === undefined
      ? 'never completed'
      : complete.type === 'info'
        ? 'info (outcome unknown)'
        : `ok ${describeValue(complete.value)}`;
  const lines = [
    `process ${interval.process}${invoke.node ? ` on ${invoke.node}` : ''}: ${invoke.f} ${describeValue(invoke.value)} → ${outcome}`,
    `invoke index ${invoke.index} at ${at(invoke.time)}${complete === undefined ? '' : `, completion index ${complete.index} at ${at(complete.time)}`}`,
  ];
  if (order !== undefined) lines.push(`linearized #${order}`);
  if (failing) lines.push('cannot be placed after the linearized prefix');
  return lines.join('\n');
}

/**
 * A self-contained HTML page showing a checked history: one row per client with its op intervals
 * on a time axis, the longest linearization found (order numbers), the op that cannot be placed,
 * and faults (nemesis ops in `faults`, default those in `ops`) shaded on the same axis.
 */
export function renderLinearizabilityHtml(
  result: LinearizabilityResult,
  ops: readonly Op[],
  faults?: readonly Op[],
  options: HtmlOptions = {},
): string {
  const example = result.counterexample;
  const [t0, lastTime] = timeRange(
    ops.map((op) => op.time),
    0,
    1,
  );
  const tEnd = lastTime + Math.max(1, (lastTime - t0) * 0.02);

  let intervals = pairIntervals(ops, tEnd);
  const notes: string[] = [];
  if (example?.key !== undefined) {
    const key = example.key;
    const before = intervals.length;
    intervals = intervals.filter((interval) => sameKey(interval.invoke.value, key));
    notes.push(
      `Showing key ${describeCanonical(key)} only (${before - intervals.length} ops on other keys hidden).`,
    );
  }

  const order = new Map<Op, number>();
  example?.longestPrefix.forEach((op, i) => order.set(op, i + 1));
  const byIndex = new Map<number, Op>();
  for (const op of order.keys()) byIndex.set(op.index, op);
  const orderOf = (interval: Interval): number | undefined => {
    for (const op of [interval.complete, interval.invoke]) {
      if (op === undefined) continue;
      const n = order.get(op) ?? order.get(byIndex.get(op.index) ?? op);
      if (n !== undefined) return n;
    }
    return undefined;
  };
  const isFailing = (interval: Interval): boolean =>
    example !== undefined &&
    [interval.invoke, interval.complete].some(
      (op) => op !== undefined && (op === example.failingOp || op.index === example.failingOp.index),
    );

  if (intervals.length > MAX_INTERVALS) {
    const failing = intervals.find(isFailing);
    const centre = failing?.start ?? intervals[0].start;
    const kept = [...intervals]
      .sort((a, b) => Math.abs(a.start - centre) - Math.abs(b.start - centre))
      .slice(0, MAX_INTERVALS);
    notes.push(`Showing the ${MAX_INTERVALS} ops nearest the failing op in time (of ${intervals.length}).`);
    intervals = kept.sort((a, b) => a.start - b.start);
  }

  const [viewStart, lastEnd] = timeRange(
    intervals.flatMap((i) => [i.start, i.end >= tEnd ? lastTime : i.end]),
    t0,
    lastTime,
  );
  const viewEnd = lastEnd + Math.max(1, (lastTime - t0) * 0.02);
  const span = Math.max(1, viewEnd - viewStart);
  const x = (t: number): number =>
    LABEL_WIDTH_PX + (Math.min(Math.max(t, viewStart), viewEnd) - viewStart) * (AXIS_WIDTH_PX / span);

  const processes = [...new Set(intervals.map((i) => i.process))].sort((a, b) => a - b);
  const rowOf = new Map(processes.map((p, i) => [p, i]));
  const width = LABEL_WIDTH_PX + AXIS_WIDTH_PX + RIGHT_MARGIN_PX;

  const svg: string[] = [];
  const faultList = faultIntervals(faults ?? ops, viewEnd).filter(
    (f) => f.end >= viewStart && f.start <= viewEnd,
  );
  const labels = faultList.map((f) => faultLabel(f, options.grudges?.get(f.index)));
  const labelRow = labelRows(
    faultList.map((f, i) => [x(f.start), x(f.start) + labels[i].length * LABEL_CHAR_PX] as const),
    LABEL_GAP_PX,
  );
  const faultRows = faultList.length === 0 ? 0 : Math.max(...labelRow) + 1;
  const opsTop = AXIS_HEIGHT_PX + faultRows * FAULT_ROW_PX;
  const height = opsTop + processes.length * ROW_HEIGHT_PX + 10;
  faultList.forEach((fault, i) => {
    const x1 = x(fault.start);
    const w = Math.max(2, x(fault.end) - x1);
    const color = faultColor(fault.f);
    const labelY = AXIS_HEIGHT_PX + labelRow[i] * FAULT_ROW_PX;
    const tip = `${labels[i]}${fault.end > fault.start ? '' : ' (instant)'}`;
    svg.push(
      `<rect class="fault" data-f="${escapeHtml(fault.f)}" x="${x1.toFixed(1)}" y="${labelY}" width="${w.toFixed(1)}" height="${height - labelY}" fill="${color}"><title>${escapeHtml(tip)}</title></rect>`,
      `<text class="fault-label" x="${(x1 + 2).toFixed(1)}" y="${labelY + FAULT_ROW_PX - 3}" fill="${color}">${escapeHtml(labels[i])}</text>`,
    );
  });
  for (const tick of axisTicks(viewStart, viewEnd)) {
    if (tick.at < viewStart || tick.at > viewEnd) continue;
    const tx = x(tick.at);
    svg.push(
      `<line class="tick" x1="${tx.toFixed(1)}" y1="${AXIS_HEIGHT_PX - 18}" x2="${tx.toFixed(1)}" y2="${height}"/>`,
      `<text class="tick-label" x="${(tx + 2).toFixed(1)}" y="10">${escapeHtml(tick.label)}</text>`,
    );
  }
  // An op's own times, to the ms.
  const opTime = (t: number): string => timeLabel(t, span, OP_TIME_STEP_NS);
  for (const process of processes) {
    const y = opsTop + rowOf.get(process)! * ROW_HEIGHT_PX;
    const nodes = [...new Set(intervals.filter((i) => i.process === process).map((i) => i.invoke.node))];
    const served = nodes.length === 1 && nodes[0] !== undefined ? ` (${nodes[0]})` : '';
    svg.push(
      `<text class="row-label" x="4" y="${y + BAR_HEIGHT_PX}">process ${process}${escapeHtml(served)}</text>`,
    );
  }
  for (const interval of intervals) {
    const y = opsTop + rowOf.get(interval.process)! * ROW_HEIGHT_PX + (ROW_HEIGHT_PX - BAR_HEIGHT_PX) / 2;
    const n = orderOf(interval);
    const failing = isFailing(interval);
    const open = interval.complete === undefined || interval.complete.type === 'info';
    const classes = [
      'op',
      failing ? 'failing' : n !== undefined ? 'linearized' : 'other',
      open ? 'open' : '',
    ];
    const x1 = x(interval.start);
    const w = Math.max(3, x(interval.end) - x1);
    const node = interval.invoke.node;
    const label = `${n === undefined ? '' : `#${n} `}${interval.invoke.f} ${shortValue(interval, example?.key !== undefined)}${node ? ` @${node}` : ''}${failing ? ' ✗' : ''}`;
    svg.push(
      `<g class="${classes.join(' ').trim()}" data-index="${interval.invoke.index}"${n === undefined ? '' : ` data-order="${n}"`}${node ? ` data-node="${escapeHtml(node)}"` : ''}>` +
        `<svg x="${x1.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${BAR_HEIGHT_PX}">` +
        `<rect width="100%" height="100%" rx="3"/>` +
        `<text x="3" y="${BAR_HEIGHT_PX - 3}">${escapeHtml(label)}</text></svg>` +
        `<title>${escapeHtml(describeInterval(interval, n, failing, opTime))}</title></g>`,
    );
  }

  const verdict =
    result.valid === true
      ? 'linearizable'
      : result.valid === false
        ? 'not linearizable'
        : 'unknown (time limit reached)';
  const summary: string[] = [
    `<p class="verdict ${result.valid === true ? 'valid' : result.valid === false ? 'invalid' : 'unknown'}">${escapeHtml(verdict)}</p>`,
    `<p>Model ${escapeHtml(result.model)}; ${result.partitions} partition(s); ${result.ops} ops; checked in ${result.elapsedMs.toFixed(1)} ms.</p>`,
  ];
  for (const explanation of options.explanations ?? []) {
    summary.push(`<p class="explanation">${escapeHtml(explanation)}</p>`);
  }
  if (example !== undefined) {
    summary.push(
      `<p>${example.key === undefined ? '' : `Key ${escapeHtml(describeCanonical(example.key))}: `}after the ${example.longestPrefix.length} ops numbered below the state is <code>${escapeHtml(example.stateBefore)}</code>, and <span class="failing-text">${escapeHtml(`${example.failingOp.f} ${describeValue(example.failingOp.value)}`)}</span> by process ${escapeHtml(String(example.failingOp.process))} (index ${example.failingOp.index}) cannot be placed.</p>`,
      `<ol class="prefix">${example.longestPrefix
        .map(
          (op) =>
            `<li>${escapeHtml(`process ${op.process}${op.node ? ` on ${op.node}` : ''}: ${op.f} ${describeValue(op.value)} (index ${op.index})`)}</li>`,
        )
        .join('')}</ol>`,
    );
  }
  for (const note of notes) summary.push(`<p class="note">${escapeHtml(note)}</p>`);
  if (span >= NS_PER_MS) {
    summary.push(
      '<p class="note" id="clock">Times are seconds since the run started, as on the terminal and in the report (the history keeps ns since the run started, Jepsen\'s <code>:time</code>).</p>',
    );
  }

  const title = options.title ?? 'Linearizability';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}: ${escapeHtml(verdict)}</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
.verdict { font-size: 18px; font-weight: 600; }
.verdict.valid { color: #1a7f37; } .verdict.invalid { color: #c62828; } .verdict.unknown { color: #9a6700; }
.failing-text { color: #c62828; font-weight: 600; }
.explanation { font-size: 14px; border-left: 3px solid #c62828; padding-left: 8px; }
.prefix { max-height: 160px; overflow: auto; font-family: ui-monospace, monospace; font-size: 12px; }
svg text { font-size: 11px; }
.tick { stroke: #eee; } .tick-label { fill: #888; }
.row-label { fill: #444; }
.fault { opacity: 0.16; } .fault-label { font-size: 11px; font-weight: 600; }
.op rect { fill: #cfd8dc; stroke: #90a4ae; }
.op.linearized rect { fill: #c8e6c9; stroke: #43a047; }
.op.failing rect { fill: #ffcdd2; stroke: #c62828; stroke-width: 2; }
.op.open rect { stroke-dasharray: 4 2; }
.op.highlight rect { stroke: #1565c0; stroke-width: 2; }
.legend span { display: inline-block; margin-right: 12px; padding: 0 6px; border: 1px solid #999; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${summary.join('\n')}
<p class="legend"><span style="background:#c8e6c9">#n linearized, in order</span><span style="background:#ffcdd2">cannot be placed</span><span style="background:#cfd8dc">not in the prefix</span><span style="border-style:dashed">info / unfinished: may take effect any time after invoke</span><span>faults: shaded in their family's colour, labelled with whom they hit (a partition's sides <code>n1,n3 | n2</code>)</span></p>
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
${svg.join('\n')}
</svg>
<p id="selection">Click an op to highlight it.</p>
<script>
(() => {
  const selection = document.getElementById('selection');
  for (const op of document.querySelectorAll('#timeline .op')) {
    op.addEventListener('click', () => {
      for (const other of document.querySelectorAll('#timeline .op.highlight')) other.classList.remove('highlight');
      op.classList.add('highlight');
      selection.textContent = op.querySelector('title').textContent;
    });
  }
  document.body.dataset.ops = String(document.querySelectorAll('#timeline .op').length);
  document.body.dataset.faults = String(document.querySelectorAll('#timeline rect.fault').length);
})();
</script>
</body>
</html>
`;
}
