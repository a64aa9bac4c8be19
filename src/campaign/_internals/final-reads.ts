import type { Op } from '../../core/op.js';
import { serving, type Recovery } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';

/** How long the final reads after a schedule may take (each key is read once). */
const FINAL_READS_MS = 5_000;
/**
 * For a system whose reads may be stale: the nodes get up to half of this to agree on every key,
 * then the final round (see `ClientWorkload.readUntilConverged`).
 */
const CONVERGING_FINAL_READS_MS = 10_000;

/**
 * Once the system serves again, each key read once more; the reads join the schedule's `ops`. A
 * system that declares its reads sequential is read on every node until they agree, and then once
 * more: those reads are marked final and checked as linearizable, so an acknowledged write that
 * was rolled back is seen even when no reader of the schedule could tell.
 */
export async function finalReads(live: LiveRun, recovery: Recovery, ops: Op[]): Promise<void> {
  const { signal, parts, history, plan } = live;
  if (serving(recovery) && !signal.aborted) {
    if (plan.system.readConsistency === 'sequential') {
      await parts.workload.finalReads(CONVERGING_FINAL_READS_MS, { untilConverged: true });
    } else {
      await parts.workload.finalReads(FINAL_READS_MS);
    }
    ops.push(...history.takeSegment());
  }
}
