import { escapeHtml } from '../_internals/escape-html.js';
import { exactJson } from '../../core/exact-json.js';
import { EdnText } from './_internals/scalar.js';
import { cycleLine, type AnomalyReport, type EdgeRef, type TxnReport } from './txn-report.js';

/** How many anomalies of one type the page shows (`--json` has them all). */
const ANOMALIES_SHOWN_PER_TYPE = 50;

export interface TxnHtmlOptions {
  readonly title?: string;
}

function show(value: unknown): string {
  if (value === null) return 'nil';
  return value instanceof EdnText ? value.text : exactJson(value);
}

/** What an edge's values say: what was written (appended), read and written next. */
function edgeDetail(edge: EdgeRef, wrote: string): string {
  switch (edge.type) {
    case 'ww':
      return `${wrote} ${show(edge.value)}, and ${show(edge.next)} came next`;
    case 'wr':
      return `${wrote} ${show(edge.value)}, which was read`;
    case 'rw':
      return wrote === 'appended'
        ? `read ${edge.read === null ? 'an empty list' : `up to ${show(edge.read)}`}, then ${show(edge.value)} was appended`
        : `read ${show(edge.read)}, then ${show(edge.value)} was written`;
    case 'process':
      return `same process ${String(edge.process)}, earlier`;
    case 'realtime':
      return 'completed before the next was invoked';
  }
}

function edgesTable(edges: readonly EdgeRef[], wrote: string): string {
  if (edges.length === 0) return '';
  const rows = edges.map(
    (edge) =>
      `<tr><td>T${edge.from}</td><td>T${edge.to}</td><td class="edge-type">${escapeHtml(edge.type)}</td>` +
      `<td>${'key' in edge ? escapeHtml(show(edge.key)) : ''}</td><td>${escapeHtml(edgeDetail(edge, wrote))}</td></tr>`,
  );
  return (
    `<p class="cycle">${escapeHtml(cycleLine(edges))}</p>` +
    `<table class="edges"><tr><th>from</th><th>to</th><th>edge</th><th>key</th><th>why</th></tr>${rows.join('')}</table>`
  );
}

function anomalyBlock(anomaly: AnomalyReport, wrote: string): string {
  const txns = anomaly.txns.map(
    (txn) =>
      `<tr data-index="${txn.index}"><td>${escapeHtml(txn.name)}</td><td>${escapeHtml(String(txn.process))}${txn.node === undefined ? '' : ` (${escapeHtml(txn.node)})`}</td>` +
      `<td>${escapeHtml(txn.type)} ${escapeHtml(txn.f)}</td><td><code>${escapeHtml(show(txn.value))}</code></td>` +
      `<td>${txn.line ?? ''}</td></tr>`,
  );
  return (
    `<div class="anomaly" data-type="${escapeHtml(anomaly.type)}">` +
    `<p class="explanation">${escapeHtml(anomaly.explanation)}</p>` +
    `<table class="txns"><tr><th>txn</th><th>process</th><th>op</th><th>micro-ops</th><th>line</th></tr>${txns.join('')}</table>` +
    `${edgesTable(anomaly.edges, wrote)}</div>`
  );
}

function modelList(models: readonly string[]): string {
  return models.length === 0 ? 'none' : models.map(escapeHtml).join(', ');
}

/**
 * A self-contained HTML page for a transactional check: the verdict against the consistency
 * model, the models ruled out and not, and each anomaly with its explanation, its transactions
 * (with their micro-ops and lines) and, for cycles, its edges.
 */
export function renderTxnHtml(report: TxnReport, options: TxnHtmlOptions = {}): string {
  const verdict = `${report.valid ? '' : 'not '}${report.consistency}`;
  const wrote = report.model === 'list-append' ? 'appended' : 'wrote';
  const sections = report.anomalyTypes.map((type) => {
    const all = report.anomalies.filter((a) => a.type === type);
    const shown = all.slice(0, ANOMALIES_SHOWN_PER_TYPE);
    const more =
      all.length > shown.length
        ? `<p class="note">… and ${all.length - shown.length} more (mallory check --json lists them all).</p>`
        : '';
    return `<section id="${escapeHtml(type)}"><h2>${escapeHtml(type)} (${all.length})</h2>${shown.map((anomaly) => anomalyBlock(anomaly, wrote)).join('\n')}${more}</section>`;
  });
  const title = options.title ?? 'Transactional check';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}: ${escapeHtml(verdict)}</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
.verdict { font-size: 18px; font-weight: 600; }
.verdict.valid { color: #1a7f37; } .verdict.invalid { color: #c62828; }
.explanation { font-size: 14px; border-left: 3px solid #c62828; padding-left: 8px; }
.anomaly { margin: 12px 0 20px; }
.cycle { font-family: ui-monospace, monospace; }
table { border-collapse: collapse; margin: 4px 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
code { font-family: ui-monospace, monospace; font-size: 12px; }
.edge-type { font-weight: 600; }
.note { color: #666; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="verdict ${report.valid ? 'valid' : 'invalid'}">${escapeHtml(verdict)}</p>
<p>Checker ${escapeHtml(report.model)}; ${report.txns} transactions; checked in ${report.elapsedMs.toFixed(1)} ms.</p>
<p class="ruled-out">Ruled out: ${modelList(report.ruledOut)}${report.ruledOut.length === 0 ? '' : ' (and every stronger model)'}.</p>
<p class="not-ruled-out">Not ruled out: ${modelList(report.notRuledOut)}.</p>
${report.anomalies.length === 0 ? '<p>No anomalies found.</p>' : sections.join('\n')}
</body>
</html>
`;
}
