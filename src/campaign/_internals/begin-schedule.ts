import type { LiveRun } from './live-run.js';
import { keyspace } from './keyspace.js';
import { ScheduleFaults } from './schedule-faults.js';
import { takeCheckpoint } from './take-checkpoint.js';

/**
 * Starts the run's next schedule: stored as started, its checkpoint taken, the timeline fresh (and on, unless a fixed
 * schedule drives the run), the episode's coverage and policy reset, the workload running.
 */
export async function beginSchedule(live: LiveRun): Promise<ScheduleFaults> {
  const { state, store, plan, parts, clock } = live;
  const { observation } = parts;
  const s = state.schedule;
  const scheduleStart = clock.nowMs();
  store.scheduleStarted(s, scheduleStart - state.startMs);
  await takeCheckpoint(live, s, scheduleStart - state.startMs);
  observation.setTimeline(!plan.fixedSchedule || s < (live.config.prefixSchedules ?? 0));
  observation.timeline.discardBefore(clock.monoNs());
  observation.takeScheduleEvents();
  state.coverage.resetEpisode();
  plan.policy?.resetEpisode?.();
  parts.workload.start(keyspace(plan, s));
  return new ScheduleFaults(live, s, scheduleStart, state.startMs + live.config.timeMs);
}
