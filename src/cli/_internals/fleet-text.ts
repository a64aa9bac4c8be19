import { type FleetReport, PLAN_MORE_RUNS } from '../../fleet/fleet-report.js';
import { type FleetStatus, INDEX_STATES } from '../../fleet/status.js';
import { compareTable } from './compare-table.js';
import { invokedAs } from './invoked-as.js';
import { replayCommand } from '../../core/replay-command.js';
import { survivalText } from './survival-text.js';

function counts(status: FleetStatus): string {
  return INDEX_STATES.filter((s) => status.counts[s] > 0)
    .map((s) => `${status.counts[s]} ${s}`)
    .join(', ');
}

/** `mallory fleet status`: a line for the plan, then a line per campaign (only the line with `short`). */
export function fleetStatusText(status: FleetStatus, options: { short?: boolean } = {}): string {
  const head = `fleet ${status.id}: ${status.total} campaigns: ${counts(status)}; ${status.findings} finding${status.findings === 1 ? '' : 's'} (${status.distinctFindings} distinct)`;
  if (options.short === true) return head;
  const lines = [
    head,
    `  ${'index'.padEnd(5)} ${'state'.padEnd(11)} ${'group'.padEnd(20)} ${'arm'.padEnd(14)} ${'seed'.padStart(10)}  findings  run`,
  ];
  for (const row of status.indices) {
    const where = row.state === 'running' ? `(${row.worker ?? '?'}) ${row.runDir ?? ''}` : (row.runDir ?? '');
    lines.push(
      `  ${String(row.index).padEnd(5)} ${row.state.padEnd(11)} ${row.group.padEnd(20)} ${row.arm.padEnd(14)} ${String(row.seed).padStart(10)}  ${String(row.findings).padStart(8)}  ${where}${row.error !== undefined ? `  error: ${row.error}` : ''}`,
    );
  }
  return lines.join('\n');
}

/** `mallory fleet report`: each group's comparison, the union of states, the findings deduplicated. */
export function fleetReportText(report: FleetReport): string {
  const me = invokedAs();
  const lines = [fleetStatusText(report.status, { short: true })];
  for (const group of report.groups) {
    lines.push('', `== ${group.group} ==`);
    if (group.comparison === undefined) {
      lines.push('no campaign of this comparison is done yet');
      continue;
    }
    if (group.warning !== undefined) lines.push(group.warning);
    lines.push(
      ...survivalText(group, report.timeMs),
      '',
      compareTable(group.comparison, { moreRuns: PLAN_MORE_RUNS, metricsOnly: true }),
    );
    const union = Object.entries(group.unionStatesByArm)
      .map(([arm, byAbs]) => `${arm} ${byAbs['causal'] ?? 0}`)
      .join(', ');
    lines.push(
      `distinct causal states over all workers together: ${group.unionStates['causal'] ?? 0} (${union})`,
    );
  }
  lines.push('');
  if (report.findings.length === 0) lines.push('findings: none');
  else {
    lines.push(
      `findings, deduplicated by kind, name and the shape of their evidence (${report.findings.length}):`,
    );
    for (const f of report.findings) {
      lines.push(
        `  ${f.kind}/${f.name}: ${f.hits} hit${f.hits === 1 ? '' : 's'} in ${f.campaigns.length} campaign${f.campaigns.length === 1 ? '' : 's'} (seeds ${f.seeds.join(', ')}; ${f.arms.join(', ')}) by ${f.workers.length} worker${f.workers.length === 1 ? '' : 's'}`,
        `    first: campaign ${f.first.index} at ${(f.first.foundAtMs / 1000).toFixed(1)} s: ${f.message.split('\n')[0]}`,
        `    ${replayCommand(me, f.first.dir, f.first.simulated)}`,
      );
    }
  }
  lines.push('', `report: ${report.dir}/report.html`, `data: ${report.dir}/results.json`);
  return lines.join('\n');
}
