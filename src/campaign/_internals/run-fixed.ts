import { ScheduleRunner } from '../schedule-runner.js';
import { isLet, type ScheduleItem } from '../schedule-file.js';
import { clusterQueries } from './cluster-queries.js';
import type { LiveRun } from './live-run.js';
import type { ScheduleFaults } from './schedule-faults.js';

/**
 * Runs a fixed schedule (`--schedule`): its lines at their times, or when their events come, for
 * at least the run's steps and past its last line, never past the budget (a line a slow fault
 * delayed past the schedule's length still runs, within the budget). A line that cannot run
 * is recorded and said.
 */
export async function runFixed(
  live: LiveRun,
  items: readonly ScheduleItem[],
  scheduled: ScheduleFaults,
  budgetEnd: number,
): Promise<void> {
  const { config, signal, state, emit } = live;
  const { scheduleStart } = scheduled;
  const lastAt = items.reduce((m, e) => Math.max(m, e.atMs + (e.delayMs ?? 0)), 0);
  const endAt = Math.min(
    Math.max(config.steps * config.stepMs, lastAt + config.stepMs),
    budgetEnd - scheduleStart,
  );
  const runner = new ScheduleRunner(items, {
    ...clusterQueries(live.parts),
    signal,
    clock: live.clock,
    skip: (item, reason) => {
      scheduled.skip(item, reason);
      const what = isLet(item) ? `let ${JSON.stringify(item.let)}` : item.f;
      emit(
        'message',
        `  schedule ${scheduled.schedule + 1} +${(item.atMs / 1000).toFixed(1)}s ${what} (skipped: ${reason})`,
      );
    },
    enact: async (fault, recorded, atMs, triggered, asked) => {
      state.step = Math.floor(atMs / config.stepMs);
      await scheduled.enact(fault, state.step, { atMs, ...fault, ...recorded }, triggered, undefined, asked);
    },
  });
  // Lines are due within the schedule's length; one a slow fault delayed still runs within the budget.
  await runner.run(scheduleStart, endAt, budgetEnd - scheduleStart);
}
