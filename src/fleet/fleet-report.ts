import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  type CompareRun,
  fewRunsWarning,
  LEAST_RUNS_FOR_SIGNIFICANCE,
  summariseRuns,
} from '../campaign/compare.js';
import { bugCommands } from '../report/results.js';
import { requireWritableDir } from './_internals/writable-dir.js';
import { fleetReportHtml } from './fleet-report-html.js';
import type { FleetFinding, FleetGroup, FleetReport } from './fleet-report-shape.js';
import type { Plan } from './plan.js';
import { groupBySignature } from '../campaign/finding-groups.js';
import { readRecords, type RecordedFinding } from './records.js';
import { unionStates } from './states.js';
import { statesOverTime } from './states-over-time.js';
import { fleetStatus } from './status.js';
import { type CampaignOutcome, timeToBug } from './time-to-bug.js';

export type { FleetFinding, FleetGroup, FleetReport } from './fleet-report-shape.js';

export const REPORT_DIR = 'report';

/** How `--each-bug` names a comparison: `bug=<switch>`. */
const BUG_GROUP_PREFIX = 'bug=';

/** How a plan gets more runs per side: `mallory plan`'s flag. */
export const PLAN_MORE_RUNS = `plan again with --seeds ${LEAST_RUNS_FOR_SIGNIFICANCE} or more`;

function groupDirName(group: string): string {
  return group.replace(/[^A-Za-z0-9._-]+/g, '_');
}

/** What a comparison's time to bug is of: its bug switch, else the bugs the plan switched on, else the system. */
function bugOf(plan: Plan, group: string): string {
  if (group.startsWith(BUG_GROUP_PREFIX)) return group.slice(BUG_GROUP_PREFIX.length);
  const bugs = plan.campaigns.find((c) => c.group === group)?.config['bugs'];
  return Array.isArray(bugs) && bugs.length > 0 ? bugs.join('+') : plan.system;
}

function sortedUnique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The fleet's one result from its workers' records: per group the comparison `compare` makes
 * (Â12 and p per metric, time to bug), the union of states over workers, and the findings
 * deduplicated by signature. Written to `<plan>/report/results.json` with each group's
 * `compare.json` and plot beside it. A plan still running is reported on what is done.
 */
export function fleetReport(plan: Plan): FleetReport {
  const status = fleetStatus(plan);
  const records = readRecords(plan);
  const dir = join(plan.dir, REPORT_DIR);
  requireWritableDir(dir, 'fleet report: the report in');
  const groupNames = sortedUnique(plan.campaigns.map((c) => c.group));
  const armsInOrder = [...new Set(plan.campaigns.map((c) => c.arm))];
  const groups = groupNames.map((group): FleetGroup => {
    const results: Record<string, CompareRun[]> = Object.fromEntries(armsInOrder.map((a) => [a, []]));
    const dirsByArm: Record<string, string[]> = Object.fromEntries(armsInOrder.map((a) => [a, []]));
    const outcomes: Record<string, CampaignOutcome[]> = Object.fromEntries(armsInOrder.map((a) => [a, []]));
    for (const c of plan.campaigns) {
      if (c.group !== group) continue;
      const record = records.get(c.index);
      if (record?.status !== 'done' || record.result === undefined) continue;
      results[c.arm].push(record.result);
      dirsByArm[c.arm].push(record.result.runDir);
      const finds = record.result.bugs.map((b) => b.atMs);
      outcomes[c.arm].push({
        index: c.index,
        seed: c.seed,
        firstFindMs: finds.length > 0 ? Math.min(...finds) : null,
        endMs: record.elapsedMs ?? plan.timeMs,
      });
    }
    const withRuns = Object.fromEntries(Object.entries(results).filter(([, runs]) => runs.length > 0));
    const comparison =
      Object.keys(withRuns).length > 0
        ? summariseRuns({
            system: plan.system,
            workload: plan.workload,
            timeMs: plan.timeMs,
            store: plan.storeDir,
            results: withRuns,
            stopOnBug: plan.stopOnBug,
            dir: join(dir, groupDirName(group)),
          })
        : undefined;
    const warning = comparison !== undefined ? fewRunsWarning(comparison, PLAN_MORE_RUNS) : undefined;
    const withDirs = Object.fromEntries(Object.entries(dirsByArm).filter(([, dirs]) => dirs.length > 0));
    return {
      group,
      comparison,
      ...(warning !== undefined ? { warning } : {}),
      ...(comparison !== undefined
        ? {
            timeToBug: timeToBug(
              bugOf(plan, group),
              Object.fromEntries(Object.entries(outcomes).filter(([, list]) => list.length > 0)),
              comparison.baseline,
            ),
            states: statesOverTime(withDirs, plan.timeMs),
          }
        : {}),
      unionStates: unionStates(Object.values(dirsByArm).flat()),
      unionStatesByArm: Object.fromEntries(
        Object.entries(dirsByArm)
          .filter(([, dirs]) => dirs.length > 0)
          .map(([arm, dirs]) => [arm, unionStates(dirs)]),
      ),
    };
  });
  const report: FleetReport = {
    format: 'mallory-fleet-report',
    plan: plan.file,
    id: plan.id,
    system: plan.system,
    workload: plan.workload,
    timeMs: plan.timeMs,
    status,
    groups,
    findings: dedupeFindings(plan, records),
    dir,
  };
  writeFileSync(join(dir, 'results.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, 'report.html'), fleetReportHtml(report));
  return report;
}

function dedupeFindings(plan: Plan, records: ReturnType<typeof readRecords>): FleetFinding[] {
  const found: { finding: RecordedFinding; index: number; worker: string }[] = [];
  for (const [index, record] of records) {
    if (record.status !== 'done') continue;
    for (const finding of record.findings ?? [])
      found.push({ finding, index, worker: `${record.host}:${record.pid}` });
  }
  const groups = groupBySignature(
    found,
    (h) => h.finding.signature,
    (a, b) => a.finding.foundAtMs - b.finding.foundAtMs || a.index - b.index,
  );
  const out = groups.map(({ signature, first, hits: list }): FleetFinding => {
    const campaigns = sortedUnique(list.map((h) => h.index));
    const of = (i: number) => plan.campaigns[i];
    // A simulated campaign's bug replays exactly: one try, not ten.
    const simulated = of(first.index).config['sim'] !== undefined;
    return {
      signature,
      kind: first.finding.kind,
      name: first.finding.name,
      message: first.finding.message,
      hits: list.reduce((n, h) => n + (h.finding.hits ?? 1), 0),
      campaigns,
      workers: sortedUnique(list.map((h) => h.worker)),
      seeds: sortedUnique(campaigns.map((i) => of(i).seed)),
      arms: sortedUnique(campaigns.map((i) => of(i).arm)),
      groups: sortedUnique(campaigns.map((i) => of(i).group)),
      first: {
        index: first.index,
        foundAtMs: first.finding.foundAtMs,
        dir: first.finding.dir,
        simulated,
        ...bugCommands(first.finding.dir, simulated),
      },
    };
  });
  return out.sort(
    (a, b) => b.campaigns.length - a.campaigns.length || a.signature.localeCompare(b.signature),
  );
}
