import { join, relative } from 'node:path';

import { escapeXml as esc } from '../report/plot.js';
import type { FleetGroup, FleetReport } from './fleet-report-shape.js';
import { survivalHtml } from './_internals/survival-html.js';

function num(n: number): string {
  return Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2)) : 'inf';
}

function secs(ms: number | null): string {
  return ms === null ? '–' : `${(ms / 1000).toFixed(1)} s`;
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const th = head.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** Links to each done campaign's own report, relative to the fleet's page (the store may move). */
function campaignLinks(c: NonNullable<FleetGroup['comparison']>, reportDir: string): string {
  const links = Object.entries(c.policies).flatMap(([policy, { runs }]) =>
    runs.map((run) => {
      const href = relative(reportDir, join(run.runDir, 'report.html'))
        .split('/')
        .map(encodeURIComponent)
        .join('/');
      return `<a href="${esc(href)}">${esc(policy)}, seed ${run.seed}</a>`;
    }),
  );
  return `<p>Each campaign's report: ${links.join(' · ')}</p>`;
}

function groupSection(group: FleetGroup, reportDir: string, timeMs: number): string {
  const c = group.comparison;
  if (c === undefined)
    return `<h2>${esc(group.group)}</h2><p>No campaign of this comparison is done yet.</p>`;
  const runs = Object.entries(c.policies)
    .map(([p, { runs }]) => `${esc(p)} ${runs.length}`)
    .join(', ');
  const metrics = table(
    ['metric', 'policy', 'mean', `${c.baseline} mean`, 'ratio', 'Â12', 'p'],
    c.comparisons.map((m) => [
      esc(m.metric),
      esc(m.policy),
      num(m.mean),
      num(m.baselineMean),
      num(m.ratio),
      m.a12.toFixed(2),
      m.p.toFixed(3),
    ]),
  );
  const union = Object.entries(group.unionStatesByArm)
    .map(([arm, byAbs]) => `${esc(arm)}: ${byAbs['causal'] ?? 0}`)
    .join(', ');
  return [
    `<h2>${esc(group.group)}</h2>`,
    `<p>Runs: ${runs}; baseline ${esc(c.baseline)}. Distinct causal states of all workers together: <b>${group.unionStates['causal'] ?? 0}</b> (${union}).</p>`,
    group.warning !== undefined ? `<p class="warning">${esc(group.warning)}</p>` : '',
    campaignLinks(c, reportDir),
    survivalHtml(group, timeMs),
    `<h3>Coverage, bugs and costs</h3>`,
    metrics,
  ].join('\n');
}

/** The fleet report as one self-contained page. */
export function fleetReportHtml(report: FleetReport): string {
  const s = report.status;
  const counts = Object.entries(s.counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
  const findings =
    report.findings.length === 0
      ? '<p>No finding.</p>'
      : table(
          ['finding', 'hits', 'campaigns', 'seeds', 'policies', 'workers', 'first hit', 'replay'],
          report.findings.map((f) => [
            `<b>${esc(`${f.kind}/${f.name}`)}</b><br><small>${esc(f.message.split('\n')[0])}</small>`,
            String(f.hits),
            f.campaigns.join(', '),
            f.seeds.join(', '),
            esc(f.arms.join(', ')),
            String(f.workers.length),
            `campaign ${f.first.index} at ${secs(f.first.foundAtMs)}`,
            `<code>${esc(f.first.replay)}</code>`,
          ]),
        );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fleet ${esc(report.id)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}.warning{background:#fff3cd;border:1px solid #e0c060;padding:4px 8px}code{font-size:12px}.plot svg{max-width:100%;height:auto}.note{color:#555;font-size:12px}
</style></head><body>
<h1>Fleet ${esc(report.id)}</h1>
<p>${esc(report.system)}, workload ${esc(report.workload)}, ${secs(report.timeMs)} per campaign. Plan: <code>${esc(report.plan)}</code></p>
<p>${s.total} campaigns: ${esc(counts)}. ${s.findings} findings, ${s.distinctFindings} distinct.</p>
<h2>Findings, deduplicated across workers</h2>
${findings}
${report.groups.map((g) => groupSection(g, report.dir, report.timeMs)).join('\n')}
</body></html>
`;
}
