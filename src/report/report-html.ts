import { describeDependence } from '../store/replay-record.js';
import { relative } from 'node:path';

import { BUG_COLOR, FAMILY_COLORS } from './colors.js';
import { formatTime } from '../core/time-axis.js';
import { coverageSeries } from './coverage-series.js';
import { familyIntervals } from './fault-windows.js';
import { opBars } from './op-bars.js';
import { escapeXml, lineChartSvg, type Band } from './plot.js';
import type { Results } from './results.js';
import { roleSpans } from './role-spans.js';
import type { RunData } from './run-data.js';
import { runVerdictLine, VERDICT_STYLE, verdictsSection } from './verdicts-section.js';
import { chartWidthPx, WORKBENCH_SCRIPT, WORKBENCH_STYLE, workbenchHtml } from './workbench.js';

const STYLE = `
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.status-complete { color: #2a7d2a; } .status-error, .status-incomplete { color: #c00000; }
.status-interrupted, .status-running { color: #b36b00; }
.outcome-error { color: #c00000; } .outcome-skipped { color: #b36b00; }
code, pre { background: #f6f6f6; padding: 1px 4px; }
.key span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
.bug { border-left: 4px solid ${BUG_COLOR}; padding-left: 8px; margin-bottom: 1em; }
.none { color: #777; font-style: italic; }
.wide { overflow-x: auto; }
table.faults td:nth-child(-n+4), table.faults td:nth-child(6) { white-space: nowrap; }
${VERDICT_STYLE}
${WORKBENCH_STYLE}`;

/** Times in the tables: to 0.1 s within the first minute, to the second after. */
const TABLE_STEP_MS = 100;

/** Coverage charts follow the run's length up to the page's width. */
const COVERAGE_MAX_WIDTH_PX = 1300;

/** Schedules and steps as people count them, and as the terminal prints them: from 1. */
export function ordinal(index: number): number {
  return index + 1;
}

/** What the numbers of the tables mean, beside the stored ones. */
export const NUMBERING =
  "Schedules and steps are numbered from 1, as on the terminal and in check.html; results.json and run.db keep each one's 0-based index (<code>schedule</code>, <code>step</code>). Times are from the start of the run.";

/** A moment of the run, from its start: `4.1 s`, `1 min 43 s`. */
function s(ms: number): string {
  return formatTime(ms, TABLE_STEP_MS, Infinity);
}

function duration(ms: number | null): string {
  if (ms === null) return '—';
  const total = Math.round(ms / 1000);
  return total >= 60 ? `${Math.floor(total / 60)} min ${total % 60} s` : `${total} s`;
}

function faultBands(data: RunData): Band[] {
  return familyIntervals(data.windows).map((i) => ({
    from: i.fromMs / 1000,
    to: i.toMs / 1000,
    kind: i.family,
    label: `${i.family} on ${i.nodes.join(', ')}: ${s(i.fromMs)}–${s(i.toMs)}`,
    color: FAMILY_COLORS[i.family],
  }));
}

/** What a replay or shrink try replays, for its report's header. */
function describeReplayOf(of: NonNullable<Results['run']['replayOf']>): string {
  const what = `${of.kind}${of.candidate !== undefined ? ` of candidate ${of.candidate}` : ''}, try ${of.try + 1}`;
  const bug = `bug ${of.bug !== undefined ? `#${of.bug} ` : ''}(${of.finding.kind}/${of.finding.name})`;
  return `${escapeXml(what)}: ${escapeXml(bug)} — <code>${escapeXml(of.bugDir)}</code>`;
}

function header(data: RunData, results: Results): string {
  const r = results.run;
  const c = results.counts;
  const rows: [string, string][] = [
    ['system', escapeXml(r.system)],
    ['run', `${escapeXml(r.id)} — <code>${escapeXml(r.dir)}</code>`],
    ['seed', String(r.seed)],
    ['policy', escapeXml(r.policy)],
    ...(r.replayOf !== undefined ? [['try of', describeReplayOf(r.replayOf)] as [string, string]] : []),
    [
      'status',
      `<span class="status-${escapeXml(results.status)}">${escapeXml(results.status)}</span>${results.error !== undefined ? ` — ${escapeXml(results.error)}` : ''}`,
    ],
    ['started', escapeXml(r.startedAt)],
    ['ended', escapeXml(r.endedAt ?? '—')],
    ['duration', duration(r.durationMs)],
    ['nodes', escapeXml(r.nodes.join(', '))],
    ['schedules', String(c.schedules)],
    [
      'client ops',
      // The terminal's wording (`fail 3 + 4 refused`): refused fails counted apart from the others.
      `${c.ops.ok} ok, ${c.ops.fail} fail` +
        (c.ops.refused > 0 ? ` + ${c.ops.refused} refused (connection refused: a node down)` : '') +
        `, ${c.ops.info} info`,
    ],
    ['faults', `${c.faults.ok} ok, ${c.faults.error} errored, ${c.faults.skipped} skipped`],
    ['verdict', runVerdictLine(results)],
    [
      'bugs',
      `${c.bugs}${c.bugHits !== undefined && c.bugHits > c.bugs ? ` (one per root cause; found ${c.bugHits} times in all)` : ''}`,
    ],
  ];
  return [
    `<h1>Mallory run: ${escapeXml(r.system)} ${escapeXml(r.id)}</h1>`,
    `<table>${rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join('')}</table>`,
    `<details><summary>configuration</summary><pre>${escapeXml(JSON.stringify(data.stored.run.config, null, 2))}</pre></details>`,
  ].join('\n');
}

function workbenchSection(data: RunData): string {
  return workbenchHtml({
    endMs: data.endMs,
    nodes: data.nodes,
    bars: opBars(data.ops, data.endMs),
    faults: data.faults,
    windows: data.windows,
    marks: data.marks,
    roles: roleSpans(data.roleChanges, data.windows, data.endMs),
    resetsMs: data.resetsMs,
    bugs: data.stored.bugs.map((b) => ({ id: b.id, atMs: b.foundAtMs, label: `${b.kind}/${b.name}` })),
  });
}

function coverageSection(data: RunData): string {
  const states = coverageSeries(data.stored.metrics, (m) => m.startsWith('states_'));
  const other = coverageSeries(data.stored.metrics, (m) =>
    ['event_types', 'intra_pairs', 'cross_pairs'].includes(m),
  );
  if (states.length === 0 && other.length === 0) {
    return '<h2 id="coverage">Coverage</h2>\n<p class="none">No coverage recorded: a fixed schedule (--schedule) cuts no windows into states.</p>';
  }
  const options = {
    xMax: data.endMs / 1000,
    bands: faultBands(data),
    xTime: true,
    widthPx: Math.min(COVERAGE_MAX_WIDTH_PX, chartWidthPx(data.endMs)),
  };
  return [
    '<h2 id="coverage">Coverage</h2>',
    '<div class="wide">',
    lineChartSvg('distinct abstract states', 'time since the run started', 'states', states, options),
    lineChartSvg(
      'distinct event types and event pairs',
      'time since the run started',
      'count',
      other,
      options,
    ),
    '</div>',
  ].join('\n');
}

function faultsSection(results: Results): string {
  if (results.faults.length === 0) return '<h2 id="faults">Faults</h2>\n<p class="none">No faults.</p>';
  const rows = results.faults.map(
    (f) =>
      `<tr class="outcome-${f.outcome}"><td>${ordinal(f.schedule)}</td><td>${f.step === null ? '' : ordinal(f.step)}</td><td>${s(f.atMs)}</td><td>${escapeXml(f.f)}</td><td>${escapeXml(JSON.stringify(f.value) ?? '')}</td><td>${escapeXml(f.grudge ?? f.nodes.join(', '))}</td><td>${f.outcome}</td><td>${escapeXml(f.error ?? '')}</td></tr>`,
  );
  return [
    '<h2 id="faults">Faults</h2>',
    `<p>${NUMBERING}</p>`,
    '<table class="faults"><tr><th>schedule</th><th>step</th><th>at</th><th>fault</th><th>target</th><th>nodes (a partition&#39;s sides, a packet fault&#39;s target)</th><th>outcome</th><th>error or reason skipped</th></tr>',
    ...rows,
    '</table>',
  ].join('\n');
}

function triggersSection(results: Results): string {
  if (!results.triggers) return '';
  const pct = (n: number, of: number): string => `${Math.round((100 * n) / of)}%`;
  const rows = results.triggers.map(
    (t) =>
      `<tr><td>${escapeXml(t.on)}${t.template !== undefined ? ` <code>${escapeXml(t.template)}</code>` : ''}</td><td>${t.armed}</td><td>${t.fired}</td><td>${pct(t.fired, t.armed)}</td><td>${t.firedNewStates}</td></tr>`,
  );
  return [
    '<h2 id="triggers">Triggers by event type</h2>',
    '<p>Steps that armed a trigger on each event type, how many of them it fired in, and how many of those firings led to a state never seen before.</p>',
    '<table><tr><th>event type</th><th>armed</th><th>fired</th><th>share fired</th><th>fired, new state</th></tr>',
    ...rows,
    '</table>',
  ].join('\n');
}

function sequencesSection(results: Results): string {
  const seq = results.sequences;
  if (!seq) return '';
  const row = (name: string, g: NonNullable<Results['sequences']>['own']): string =>
    `<tr><td>${name}</td><td>${g.schedules}</td><td>${g.windows}</td><td>${g.newStates}</td><td>${g.windows > 0 ? (g.newStates / g.windows).toFixed(2) : '-'}</td></tr>`;
  return [
    '<h2 id="sequences">Replayed fault sequences</h2>',
    '<p>The schedules that replayed a kept fault sequence (mutated) against those whose every step the policy decided: how many windows each reached, and how many of them were new.</p>',
    '<table><tr><th>schedules</th><th>count</th><th>windows</th><th>new states</th><th>new per window</th></tr>',
    row('replayed a kept sequence', seq.replayed),
    row('own decisions', seq.own),
    '</table>',
  ].join('\n');
}

/** The later schedules that found a bug again (its record keeps the first one's), or nothing. */
function hitsLine(bug: Results['bugs'][number]): string {
  const later = (bug.hits ?? []).slice(1);
  if (later.length === 0) return '';
  const items = later.map(
    (h) => `schedule ${ordinal(h.schedule)} at ${s(h.foundAtMs)}: ${escapeXml(h.message.slice(0, 300))}`,
  );
  return `<details class="hits"><summary>found again by ${later.length} more schedule${later.length === 1 ? '' : 's'} (${later.map((h) => ordinal(h.schedule)).join(', ')})</summary><ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul></details>`;
}

function bugsSection(results: Results, outDir: string): string {
  if (results.bugs.length === 0) return '<h2 id="bugs">Bugs</h2>\n<p class="none">No bugs found.</p>';
  const bugs = results.bugs.map((b) =>
    [
      `<div class="bug"><h3>bug ${b.id}: ${escapeXml(b.kind)}/${escapeXml(b.name)} (schedule ${ordinal(b.schedule)}, at ${s(b.foundAtMs)})</h3>`,
      `<p>${escapeXml(b.message)}</p>`,
      hitsLine(b),
      `<p>record: <code>${escapeXml(b.dir)}</code>${b.checkHtml !== null ? ` — <a href="${escapeXml(relative(outDir, b.checkHtml))}">check.html</a> (the counterexample)` : ''}</p>`,
      `<p>replay: <code>${escapeXml(b.replay)}</code><br>shrink: <code>${escapeXml(b.shrink)}</code></p>`,
      `<p class="start">${b.checkpoint !== null ? `a replay starts from the checkpoint of schedule ${ordinal(b.schedule)}: <code>${escapeXml(b.checkpoint)}</code> (every node's data dir as that schedule began; <code>--fresh</code> for empty ones)` : 'a replay starts from empty data dirs: the run kept no checkpoint of this schedule'}</p>`,
      b.replays !== undefined
        ? `<p class="${b.replays.dependsOnState ? 'depends' : 'replays'}">${escapeXml(describeDependence(b.replays))}</p></div>`
        : '</div>',
    ].join('\n'),
  );
  return ['<h2 id="bugs">Bugs</h2>', ...bugs].join('\n');
}

/** What the run's checkpoints cost: the pause of the nodes per copy, and the bytes. */
function checkpointsSection(results: Results): string {
  const c = results.checkpoints;
  if (c === undefined) return '';
  const mib = (bytes: number): string => `${(bytes / 1024 ** 2).toFixed(2)} MiB`;
  const kept = c.kept.map((k) => `${ordinal(k.schedule)}${k.bug ? ' (bug)' : ''}`).join(', ') || 'none';
  const dropped = c.dropped.filter((d) => d.reason.includes('cap'));
  return [
    '<h2 id="checkpoints">Checkpoints</h2>',
    `<p>${c.taken} taken, one at each schedule's start (the nodes stopped for the copy: median ${c.pauseMsMedian ?? '-'} ms, at most ${c.pauseMsMax ?? '-'} ms; ${c.bytesPerSchedule === null ? '-' : mib(c.bytesPerSchedule)} per schedule). Kept: schedules ${kept}, ${mib(c.bytes)} in all (the newest ${c.keep} and every bug's, within ${mib(c.capBytes)}).${dropped.length > 0 ? ` Dropped past the cap: ${dropped.map((d) => `schedule ${ordinal(d.schedule)}`).join(', ')}.` : ''}</p>`,
  ].join('\n');
}

/**
 * Counts, once the page is laid out, the charts whose lines or windows have a size on screen, the
 * shaded fault bands, and the workbench's lanes, bars, latency points, rate lines and fault labels
 * into `<body data-…>`: what a headless browser test reads to know every view was drawn. Then
 * the workbench's zoom.
 */
const SCRIPT = `<script>
(() => {
  const charts = [...document.querySelectorAll('svg.plot, svg.timeline, svg.lanes, svg.scatter, svg.rate')];
  const sized = (e) => { const b = e.getBoundingClientRect(); return b.width > 0 || b.height > 0; };
  const drawn = charts.filter((svg) => [...svg.querySelectorAll('path.series, rect.window, rect.role, rect.bar, path.points, path.rate')].some(sized));
  const d = document.body.dataset;
  d.plots = String(charts.length);
  d.drawn = String(drawn.length);
  d.bands = String([...document.querySelectorAll('svg.plot rect.band')].filter(sized).length);
  d.lanes = document.querySelector('svg.lanes')?.dataset.lanes ?? '0';
  d.bars = String([...document.querySelectorAll('svg.lanes rect.bar')].filter(sized).length);
  d.points = String([...document.querySelectorAll('svg.scatter path.points')].filter(sized).reduce((n, p) => n + Number(p.dataset.n), 0));
  d.quantiles = String([...document.querySelectorAll('svg.scatter path.quantile')].filter(sized).length);
  d.rates = String([...document.querySelectorAll('svg.rate path.rate')].filter(sized).length);
  d.faultLabels = String(document.querySelectorAll('svg.fault-labels text.fault-label').length);
})();
${WORKBENCH_SCRIPT}
</script>`;

/** The run report: a self-contained page (inline SVG, CSS and a tiny self-check script; nothing fetched). */
export function reportHtml(data: RunData, results: Results, outDir: string): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>Mallory ${escapeXml(results.run.system)} ${escapeXml(results.run.id)} — ${escapeXml(results.status)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    header(data, results),
    `<p><a href="#workbench">timeline, latency, rate</a> · <a href="#coverage">coverage</a> · <a href="#faults">faults</a>${results.triggers ? ' · <a href="#triggers">triggers</a>' : ''}${results.sequences ? ' · <a href="#sequences">sequences</a>' : ''}${results.checkpoints ? ' · <a href="#checkpoints">checkpoints</a>' : ''} · <a href="#verdicts">verdicts</a> · <a href="#bugs">bugs</a> · <a href="results.json">results.json</a></p>`,
    bugsSection(results, outDir),
    verdictsSection(results),
    workbenchSection(data),
    coverageSection(data),
    faultsSection(results),
    triggersSection(results),
    sequencesSection(results),
    checkpointsSection(results),
    SCRIPT,
    '</body></html>',
  ].join('\n');
}
