import type { Op } from '../../core/op.js';
import type { LiveRun } from './live-run.js';

/**
 * Ends the schedule's workload and takes its ops, after those `carried` over from the warm-up
 * (checked with the first schedule's; `carried` is emptied).
 */
export async function takeScheduleOps(live: LiveRun, carried: Op[]): Promise<Op[]> {
  const { state, parts, history } = live;
  parts.observation.setTimeline(false);
  state.phase = 'checking';
  await parts.workload.stop();
  return [...carried.splice(0), ...history.takeSegment()];
}
