import type { RunPlan } from '../create-run.js';

/**
 * The index of the key prefix of the run's first schedule: 0, or for a run started from a
 * checkpoint, the checkpoint's `keysFrom` (the first index no run before it wrote keys under).
 */
export function firstKeyspace(plan: Pick<RunPlan, 'startFrom'>): number {
  const manifest = plan.startFrom?.manifest;
  return manifest === undefined ? 0 : (manifest.keysFrom ?? manifest.schedule);
}

/**
 * The key prefix of a schedule's workload (and of the warm-up): every schedule writes keys of its
 * own, so a check never meets values an earlier schedule left. A run started from a checkpoint
 * numbers on from its `keysFrom`, and warms up under keys named after the run itself: the keys it
 * uses are ones its checkpoint has no value for.
 */
export function keyspace(
  plan: Pick<RunPlan, 'startFrom'>,
  schedule: number | { readonly warmupOf: string },
): string {
  if (typeof schedule === 'number') return `s${firstKeyspace(plan) + schedule}`;
  return plan.startFrom === undefined ? 'warmup' : `warmup-${schedule.warmupOf}`;
}
