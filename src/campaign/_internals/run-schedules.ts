import type { Rng } from '../../core/random.js';
import type { AfterBudget } from '../../core/run-timing.js';
import { describeImports } from '../exchange.js';
import type { LiveRun } from './live-run.js';
import { runSchedule } from './run-schedule.js';
import type { RunState } from './run-state.js';
import type { WarmUp } from './warm-up.js';

/**
 * Schedule after schedule until the time budget is spent or the run is aborted: fixed schedules
 * run once each, in order, and `--stop-on-bug` stops after the first schedule that found a bug.
 */
export async function runSchedules(live: LiveRun, warm: WarmUp, rng: Rng): Promise<void> {
  const { config, state, clock } = live;
  state.phase = 'fuzzing';
  const budgetEnd = state.startMs + config.timeMs;
  const policyRng = rng.fork('policy');
  state.schedulesFromMs = clock.nowMs();
  try {
    await scheduleLoop(live, warm, budgetEnd, policyRng);
  } finally {
    state.schedulesToMs = clock.nowMs();
  }
}

/**
 * What followed the time budget, when the last schedule ended after it: the budget bounds the
 * faults (none starts after it, one still out is cut short), and only the last schedule's reset,
 * final reads and checks follow it.
 */
export function afterBudget(
  state: Pick<RunState, 'startMs' | 'faultsEndedMs' | 'schedulesToMs' | 'lastPhases'>,
  budgetMs: number,
): AfterBudget | undefined {
  const { startMs, faultsEndedMs, schedulesToMs, lastPhases } = state;
  if (faultsEndedMs === undefined || lastPhases === undefined || schedulesToMs === undefined)
    return undefined;
  if (schedulesToMs <= startMs + budgetMs) return undefined;
  const round = Math.round;
  return {
    faultsEndedMs: round(faultsEndedMs - startMs),
    resetMs: round(lastPhases.resetMs),
    finalReadsMs: round(lastPhases.finalReadsMs),
    checksMs: round(lastPhases.checksMs),
  };
}

async function scheduleLoop(live: LiveRun, warm: WarmUp, budgetEnd: number, policyRng: Rng): Promise<void> {
  const { config, signal, state, plan, clock } = live;
  for (state.schedule = 0; clock.nowMs() < budgetEnd && !signal.aborted; state.schedule++) {
    const imports = live.exchange?.pull(state.schedule) ?? [];
    if (imports.length > 0)
      live.emit('message', `  schedule ${state.schedule + 1}: ${describeImports(imports)}`);
    await runSchedule(live, warm, budgetEnd, policyRng);
    live.exchange?.publish(state.schedule + 1);
    // Fixed files end the run with their last; so does a replay's policy prefix without files.
    const prefix = config.prefixSchedules ?? 0;
    const total = plan.fixedSchedule !== undefined ? prefix + plan.fixedSchedule.length : prefix || undefined;
    const last = total !== undefined && state.schedule + 1 >= total;
    if (last || (config.stopOnBug && state.bugs.length > 0)) {
      state.schedule++;
      break;
    }
  }
}
