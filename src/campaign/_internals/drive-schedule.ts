import type { Rng } from '../../core/random.js';
import { describeFollowed } from '../../policy/policy.js';
import type { LiveRun } from './live-run.js';
import { runFixed } from './run-fixed.js';
import { runSteps } from './run-steps.js';
import type { ScheduleFaults } from './schedule-faults.js';

/**
 * The schedule's faults: the fixed schedule's lines, or the policy's decisions step by step (and
 * then the sequence it followed, if it says one).
 */
export async function driveSchedule(
  live: LiveRun,
  scheduled: ScheduleFaults,
  budgetEnd: number,
  policyRng: Rng,
): Promise<void> {
  const { plan, store, emit } = live;
  const prefix = live.config.prefixSchedules ?? 0;
  if (plan.fixedSchedule && scheduled.schedule >= prefix) {
    await runFixed(live, plan.fixedSchedule[scheduled.schedule - prefix] ?? [], scheduled, budgetEnd);
    return;
  }
  const policy = plan.policy!;
  await runSteps(live, policy, policyRng, scheduled, budgetEnd);
  const followed = policy.episode?.();
  if (followed !== undefined) {
    store.scheduleFollowed(scheduled.schedule, followed);
    emit('message', `  schedule ${scheduled.schedule + 1}: ${describeFollowed(followed)}`);
  }
}
