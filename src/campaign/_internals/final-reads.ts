import type { Op } from '../../core/op.js';
import type { Recovery } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';

/** How long the final reads after a schedule may take (each key is read once). */
const FINAL_READS_MS = 5_000;

/** Once the system serves again, each key read once more; the reads join the schedule's `ops`. */
export async function finalReads(live: LiveRun, recovery: Recovery, ops: Op[]): Promise<void> {
  const { signal, parts, history } = live;
  if (recovery.recovered && !signal.aborted) {
    await parts.workload.finalReads(FINAL_READS_MS);
    ops.push(...history.takeSegment());
  }
}
