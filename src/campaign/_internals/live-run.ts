import type { Clock } from '../../core/clock.js';
import type { RunStore } from '../../store/run-store.js';
import type { History } from '../../workload/history.js';
import type { ScheduleChecker } from '../checker.js';
import type { RunConfig } from '../config.js';
import type { RunParts, RunPlan } from '../create-run.js';
import type { Exchange } from '../exchange.js';
import type { Emit } from './emitter.js';
import type { RunState } from './run-state.js';

/**
 * A campaign once its parts are built, as each phase of a schedule sees it: the configuration and
 * the plan, the store and the history, the live cluster and observers, the checks, the reporters'
 * hooks, the abort signal and the run's tallies.
 */
export interface LiveRun {
  readonly config: RunConfig;
  readonly plan: RunPlan;
  readonly signal: AbortSignal;
  /** The time the campaign's own waits and stamps read: the host's, or a simulated world's. */
  readonly clock: Clock;
  readonly emit: Emit;
  readonly state: RunState;
  readonly store: RunStore;
  readonly history: History;
  readonly parts: RunParts;
  readonly checkers: readonly ScheduleChecker[];
  /** Where the campaign shares what it learns with others (`--exchange`), if it does. */
  readonly exchange?: Exchange;
}
