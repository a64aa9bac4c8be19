import type { Rng } from '../../core/random.js';
import { describeImports } from '../exchange.js';
import type { LiveRun } from './live-run.js';
import { runSchedule } from './run-schedule.js';
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
  const overrun = afterBudget(state.startMs, budgetEnd, state.faultsEndedMs, state.schedulesToMs);
  if (overrun !== undefined && !live.signal.aborted) live.emit('message', `  ${overrun}`);
}

function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * What ran after the time budget, when something did: the budget bounds the faults (none starts
 * after it), and only the last schedule's reset, final reads and checks follow it.
 */
export function afterBudget(
  startMs: number,
  budgetEnd: number,
  faultsEndedMs: number | undefined,
  schedulesToMs: number,
): string | undefined {
  if (faultsEndedMs === undefined || schedulesToMs <= budgetEnd) return undefined;
  const took = ((schedulesToMs - faultsEndedMs) / 1000).toFixed(1);
  const past = ((schedulesToMs - budgetEnd) / 1000).toFixed(1);
  const faults =
    faultsEndedMs <= budgetEnd
      ? `the faults ended at ${clock(faultsEndedMs - startMs)}, within --time ${clock(budgetEnd - startMs)}`
      : `the last fault, started within --time ${clock(budgetEnd - startMs)}, ended at ${clock(faultsEndedMs - startMs)} (none started after)`;
  return `${faults}; the last schedule's reset, final reads and checks took ${took} s (${past} s past the budget)`;
}

async function scheduleLoop(live: LiveRun, warm: WarmUp, budgetEnd: number, policyRng: Rng): Promise<void> {
  const { config, signal, state, plan, clock } = live;
  for (state.schedule = 0; clock.nowMs() < budgetEnd && !signal.aborted; state.schedule++) {
    const imports = live.exchange?.pull(state.schedule) ?? [];
    if (imports.length > 0)
      live.emit('message', `  schedule ${state.schedule + 1}: ${describeImports(imports)}`);
    await runSchedule(live, warm, budgetEnd, policyRng);
    live.exchange?.publish(state.schedule + 1);
    const lastFixed = plan.fixedSchedule !== undefined && state.schedule + 1 >= plan.fixedSchedule.length;
    if (lastFixed || (config.stopOnBug && state.bugs.length > 0)) {
      state.schedule++;
      break;
    }
  }
}
