import type { Plan } from './plan.js';
import { type IndexRecord, liveClaim, readRecords } from './records.js';

/**
 * Where an index stands: `pending` (never started), `running` (a live worker holds it), `done`,
 * `failed`, `interrupted`, or `abandoned` (its record says running but no live worker holds it:
 * the worker died; a rerun replaces its run).
 */
export type IndexState = 'pending' | 'running' | 'done' | 'failed' | 'interrupted' | 'abandoned';

export const INDEX_STATES: readonly IndexState[] = [
  'done',
  'running',
  'pending',
  'failed',
  'interrupted',
  'abandoned',
];

export interface IndexStatusRow {
  readonly index: number;
  readonly group: string;
  readonly arm: string;
  readonly seed: number;
  readonly state: IndexState;
  readonly attempt: number;
  readonly worker?: string;
  readonly runDir?: string;
  readonly findings: number;
  readonly error?: string;
}

export interface FleetStatus {
  readonly plan: string;
  readonly id: string;
  readonly total: number;
  readonly counts: Readonly<Record<IndexState, number>>;
  /** Findings of the done campaigns, and how many distinct signatures they make. */
  readonly findings: number;
  readonly distinctFindings: number;
  readonly indices: readonly IndexStatusRow[];
}

function stateOf(plan: Plan, index: number, record: IndexRecord | undefined): IndexState {
  if (liveClaim(plan, index) !== undefined) return 'running';
  if (record === undefined) return 'pending';
  return record.status === 'running' ? 'abandoned' : record.status;
}

/** The plan's progress from its workers' records and claims. */
export function fleetStatus(plan: Plan): FleetStatus {
  const records = readRecords(plan);
  const counts: Record<IndexState, number> = {
    pending: 0,
    running: 0,
    done: 0,
    failed: 0,
    interrupted: 0,
    abandoned: 0,
  };
  const signatures = new Set<string>();
  let findings = 0;
  const indices = plan.campaigns.map((c): IndexStatusRow => {
    const record = records.get(c.index);
    const state = stateOf(plan, c.index, record);
    counts[state]++;
    const found = state === 'done' ? (record?.findings ?? []) : [];
    findings += found.length;
    for (const f of found) signatures.add(f.signature);
    const claim = state === 'running' ? liveClaim(plan, c.index) : undefined;
    return {
      index: c.index,
      group: c.group,
      arm: c.arm,
      seed: c.seed,
      state,
      attempt: record?.attempt ?? 0,
      ...(claim !== undefined ? { worker: `${claim.host}:${claim.pid}` } : {}),
      ...(record?.runDir !== undefined ? { runDir: record.runDir } : {}),
      findings: found.length,
      ...(record?.error !== undefined && state === 'failed' ? { error: record.error } : {}),
    };
  });
  return {
    plan: plan.file,
    id: plan.id,
    total: plan.campaigns.length,
    counts,
    findings,
    distinctFindings: signatures.size,
    indices,
  };
}

/** Whether every index of the plan is done. */
export function planFinished(status: FleetStatus): boolean {
  return status.counts.done === status.total;
}
