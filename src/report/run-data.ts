import { createReadStream, existsSync, readdirSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

import type { Op } from '../core/op.js';
import { readRoles } from '../store/role-file.js';
import { notARunReason, readHistory, readStoredRun, type StoredRun } from '../store/run-reader.js';
import {
  faultWindows,
  resetTimes,
  timedFaults,
  type FaultMark,
  type FaultWindow,
  type TimedFault,
} from './fault-windows.js';
import { completions, type Completion } from './op-series.js';
import { roleChangeOfLine, type RoleChange } from './role-spans.js';

/** Steps and step length when the config does not say (the campaign's defaults). */
const DEFAULT_STEPS = 12;
const DEFAULT_STEP_MS = 2500;
/** Node log files searched for role changes. */
const LOG_FILES = ['stdout.log', 'stderr.log'];

/** Everything a report shows, read from a run directory, on one time axis (ms since the run started). */
export interface RunData {
  readonly dir: string;
  readonly stored: StoredRun;
  readonly ops: readonly Op[];
  readonly completions: readonly Completion[];
  readonly nodes: readonly string[];
  readonly faults: readonly TimedFault[];
  readonly windows: readonly FaultWindow[];
  readonly marks: readonly FaultMark[];
  readonly resetsMs: readonly number[];
  readonly roleChanges: readonly RoleChange[];
  /** The run's length: until it ended, or its last record when it did not. */
  readonly endMs: number;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** The run's nodes: its `nodes/` directories, else the ones its faults named. */
function runNodes(dir: string, stored: StoredRun): string[] {
  const nodesDir = join(dir, 'nodes');
  const fromDirs = existsSync(nodesDir)
    ? readdirSync(nodesDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
    : [];
  const names = fromDirs.length > 0 ? fromDirs : [...new Set(stored.faults.flatMap((f) => f.nodes))];
  return names.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

async function readRoleChanges(
  dir: string,
  nodes: readonly string[],
  runStartMs: number,
): Promise<RoleChange[]> {
  const changes: RoleChange[] = [];
  for (const node of nodes) {
    // The adapter's own events said the node's roles: those, not a guess from its log text.
    const recorded = readRoles(dir, node);
    if (recorded !== undefined) {
      changes.push(...recorded.map((r) => ({ node, atMs: r.atMs, role: r.role })));
      continue;
    }
    for (const file of LOG_FILES) {
      const path = join(dir, 'nodes', node, file);
      if (!existsSync(path)) continue;
      const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
      for await (const line of lines) {
        const change = roleChangeOfLine(node, line, runStartMs);
        if (change) changes.push(change);
      }
    }
  }
  return changes.sort((a, b) => a.atMs - b.atMs);
}

/** Reads a run directory for its report. Throws when it is not one (see `notARunReason`). */
export async function readRunData(runDir: string): Promise<RunData> {
  const reason = notARunReason(runDir);
  if (reason !== undefined) throw new Error(reason);
  const dir = realpathSync(resolve(runDir));
  const stored = readStoredRun(dir);
  const ops = await readHistory(dir);
  const startMs = Date.parse(stored.run.startedAt);
  const summaryElapsed = stored.run.summary?.elapsedMs;
  const lastOpMs = ops.length > 0 ? ops[ops.length - 1].time / 1e6 : 0;
  const lastRecordMs = Math.max(
    lastOpMs,
    ...stored.schedules.map((s) => s.endedMs ?? s.startedMs),
    ...stored.steps.map((s) => s.endedMs ?? s.startedMs),
  );
  const endMs =
    typeof summaryElapsed === 'number'
      ? summaryElapsed
      : stored.run.endedAt !== null && Number.isFinite(startMs)
        ? Math.max(lastRecordMs, Date.parse(stored.run.endedAt) - startMs)
        : lastRecordMs;
  const config = stored.run.config;
  const scheduleMs = numberOr(config.steps, DEFAULT_STEPS) * numberOr(config.stepMs, DEFAULT_STEP_MS);
  const resetsMs = resetTimes(stored.schedules, stored.steps, scheduleMs, endMs);
  const faults = timedFaults(stored.faults, stored.schedules, ops);
  const { windows, marks } = faultWindows(faults, resetsMs, endMs);
  const nodes = runNodes(dir, stored);
  const roleChanges = Number.isFinite(startMs) ? await readRoleChanges(dir, nodes, startMs) : [];
  return {
    dir,
    stored,
    ops,
    completions: completions(ops),
    nodes,
    faults,
    windows,
    marks,
    resetsMs,
    roleChanges: roleChanges.filter((c) => c.atMs >= 0 && c.atMs <= endMs),
    endMs,
  };
}
