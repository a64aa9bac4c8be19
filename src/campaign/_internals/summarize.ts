import { hasDiskLayer } from '../../cluster/placement.js';
import type { RunStore } from '../../store/run-store.js';
import type { RunParts, RunPlan } from '../create-run.js';
import type { RunSummary } from '../reporter.js';
import { runTiming } from '../../core/run-timing.js';
import { runVerdict } from '../../core/verdict.js';
import type { RunOutcome } from './run-outcome.js';
import { afterBudget } from './run-schedules.js';
import type { RunState } from './run-state.js';

/** The run's summary: how it ended, what it ran and found, and its metrics. */
export function summarize(
  plan: RunPlan,
  store: RunStore,
  state: RunState,
  parts: RunParts | undefined,
  outcome: RunOutcome,
  /** `--time`. */
  budgetMs: number,
  /** When the run ended (ms since the epoch, on the run's clock). */
  endMs: number,
): RunSummary {
  const { error } = outcome;
  const counts = parts?.workload.counts ?? { ok: 0, fail: 0, info: 0 };
  const timing = runTiming(
    budgetMs,
    state.startMs,
    { fromMs: state.schedulesFromMs, toMs: state.schedulesToMs },
    endMs,
    afterBudget(state, budgetMs),
  );
  return {
    runDir: store.dir,
    status: outcome.status,
    system: plan.definition.name,
    seed: plan.seed,
    policy: plan.policy?.name ?? 'schedule',
    elapsedMs: timing.elapsedMs,
    schedules: state.schedule,
    ops: { ...counts, refused: counts.refused ?? 0 },
    faults: state.faultCount,
    timing,
    bugs: state.bugs,
    verdict: runVerdict(state.verdicts),
    metrics: metrics(plan, state, parts),
    ...(parts?.checkpoints !== undefined ? { checkpoints: parts.checkpoints.summary() } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

function metrics(plan: RunPlan, state: RunState, parts: RunParts | undefined): Record<string, number> {
  return {
    ...state.coverage.snapshot(),
    fuzzer_peak_rss_mb: Math.round(state.peakRssBytes / 2 ** 20),
    // Events the timeline dropped to stay within its memory bound (a flood from the system).
    events_shed: parts?.observation.timeline.stats.shed ?? 0,
    // Messages between nodes observed (relayed by the proxies, or captured locally or on hosts).
    net_events: parts?.observation.netEvents ?? 0,
    ...(hasDiskLayer(plan.placement) ? { induced_exits: state.inducedExits } : {}),
    ...(state.decisions > 0
      ? { state_arrival_pct: Math.round((1000 * state.decisionsWithState) / state.decisions) / 10 }
      : {}),
    ...(plan.policy?.arm
      ? {
          triggers_armed: state.triggersArmed,
          triggers_fired: state.triggersFired,
          ...(state.triggersArmed > 0
            ? { triggers_fired_pct: Math.round((1000 * state.triggersFired) / state.triggersArmed) / 10 }
            : {}),
        }
      : {}),
  };
}
