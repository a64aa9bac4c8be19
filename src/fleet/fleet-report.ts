import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  type CompareResult,
  type CompareRun,
  fewRunsWarning,
  LEAST_RUNS_FOR_SIGNIFICANCE,
  summariseRuns,
} from '../campaign/compare.js';
import { bugCommands } from '../report/results.js';
import { requireWritableDir } from './_internals/writable-dir.js';
import { fleetReportHtml } from './fleet-report-html.js';
import type { Plan } from './plan.js';
import { readRecords, type RecordedFinding } from './records.js';
import { unionStates } from './states.js';
import { fleetStatus, type FleetStatus } from './status.js';

export const REPORT_DIR = 'report';

/** How a plan gets more runs per side: `mallory plan`'s flag. */
export const PLAN_MORE_RUNS = `plan again with --seeds ${LEAST_RUNS_FOR_SIGNIFICANCE} or more`;

/** One bug as the fleet saw it: every hit of one signature, over workers, seeds and policies. */
export interface FleetFinding {
  readonly signature: string;
  readonly kind: string;
  readonly name: string;
  /** The first hit's message. */
  readonly message: string;
  readonly hits: number;
  /** Distinct campaigns (indices), workers (host:pid) and seeds that hit it. */
  readonly campaigns: readonly number[];
  readonly workers: readonly string[];
  readonly seeds: readonly number[];
  readonly arms: readonly string[];
  readonly groups: readonly string[];
  /** The earliest hit (in campaign time): where to look first, and how to replay it. */
  readonly first: {
    readonly index: number;
    readonly foundAtMs: number;
    readonly dir: string;
    readonly replay: string;
    readonly shrink: string;
  };
}

export interface FleetGroup {
  readonly group: string;
  /** The comparison of the group's done campaigns, as `compare` gives it (`compare.json` in its dir). */
  readonly comparison: CompareResult | undefined;
  /** Said when the comparison's runs are too few for any difference to be significant. */
  readonly warning?: string;
  /** Distinct states of all the group's done runs together, per abstraction, and per arm. */
  readonly unionStates: Readonly<Record<string, number>>;
  readonly unionStatesByArm: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export interface FleetReport {
  readonly format: 'mallory-fleet-report';
  readonly plan: string;
  readonly id: string;
  readonly system: string;
  readonly workload: string;
  readonly timeMs: number;
  readonly status: FleetStatus;
  readonly groups: readonly FleetGroup[];
  readonly findings: readonly FleetFinding[];
  readonly dir: string;
}

function groupDirName(group: string): string {
  return group.replace(/[^A-Za-z0-9._-]+/g, '_');
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
    for (const c of plan.campaigns) {
      if (c.group !== group) continue;
      const record = records.get(c.index);
      if (record?.status !== 'done' || record.result === undefined) continue;
      results[c.arm].push(record.result);
      dirsByArm[c.arm].push(record.result.runDir);
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
    return {
      group,
      comparison,
      ...(warning !== undefined ? { warning } : {}),
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
  const hits = new Map<string, { finding: RecordedFinding; index: number; worker: string }[]>();
  for (const [index, record] of records) {
    if (record.status !== 'done') continue;
    for (const finding of record.findings ?? []) {
      const list = hits.get(finding.signature) ?? [];
      list.push({ finding, index, worker: `${record.host}:${record.pid}` });
      hits.set(finding.signature, list);
    }
  }
  const out = [...hits].map(([signature, list]): FleetFinding => {
    const first = [...list].sort((a, b) => a.finding.foundAtMs - b.finding.foundAtMs || a.index - b.index)[0];
    const campaigns = sortedUnique(list.map((h) => h.index));
    const of = (i: number) => plan.campaigns[i];
    return {
      signature,
      kind: first.finding.kind,
      name: first.finding.name,
      message: first.finding.message,
      hits: list.length,
      campaigns,
      workers: sortedUnique(list.map((h) => h.worker)),
      seeds: sortedUnique(campaigns.map((i) => of(i).seed)),
      arms: sortedUnique(campaigns.map((i) => of(i).arm)),
      groups: sortedUnique(campaigns.map((i) => of(i).group)),
      first: {
        index: first.index,
        foundAtMs: first.finding.foundAtMs,
        dir: first.finding.dir,
        ...bugCommands(first.finding.dir),
      },
    };
  });
  return out.sort(
    (a, b) => b.campaigns.length - a.campaigns.length || a.signature.localeCompare(b.signature),
  );
}
