import { describeFault, type Fault } from '../../core/fault.js';
import type { Rng } from '../../core/random.js';
import { describeTrigger, type TriggeredAction } from '../../core/trigger.js';
import type { ActionSpace, Policy } from '../../policy/policy.js';
import type { Timeline } from '../../timeline/timeline.js';
import type { Window } from '../../timeline/window.js';
import { ArmedTrigger } from '../armed-trigger.js';
import type { RunConfig } from '../config.js';
import { clusterQueries } from './cluster-queries.js';
import type { LiveRun } from './live-run.js';
import { policyAbstraction } from './policy-abstraction.js';
import type { ScheduleFaults } from './schedule-faults.js';

/** How long a decision waits for the previous window's state (the timeline's grace is 150 ms). */
const STATE_WAIT_MS = 600;

/**
 * Runs a schedule the policy drives, step after step, until the run's steps or its budget are
 * spent: each step decides a fault (and perhaps arms a trigger) from the state the last window
 * ended in, if it has arrived, and learns from the state its own window ends in.
 */
export async function runSteps(
  live: LiveRun,
  policy: Policy,
  rng: Rng,
  scheduled: ScheduleFaults,
  budgetEnd: number,
): Promise<void> {
  await new StepLoop(live, policy, rng, scheduled, budgetEnd).run();
}

/** Whether a step is in a quiet period of `--pace` (no fault, every fault healed). */
function isQuiet(pace: RunConfig['pace'], step: number): boolean {
  return pace !== undefined && step >= 0 && step % (pace.faultSteps + pace.quietSteps) >= pace.faultSteps;
}

/** What a step did, as its row and its lesson say. */
interface StepChoice {
  readonly quiet: boolean;
  /** The state the step decided in: undefined when it had not arrived in time. */
  readonly decidedWith: string | undefined;
  readonly fault: Fault | null;
  /**
   * What the step armed: undefined when the policy chose a trigger but the step ended before it
   * could be armed (its fault took the whole step) — then it neither counts nor teaches.
   */
  readonly armed: TriggeredAction | null | undefined;
  readonly fired: boolean;
}

interface StepRow {
  readonly schedule: number;
  readonly step: number;
  readonly startedMs: number;
  readonly endedMs: number;
  readonly fault: string | null;
}

class StepLoop {
  private readonly space: ActionSpace;
  private readonly abstraction: string;
  private readonly timeline: Timeline;
  private observed: { step: number; state: string } | undefined;
  private pending: Promise<void> | undefined;
  private windowStartTs: number;

  constructor(
    private readonly live: LiveRun,
    private readonly policy: Policy,
    private readonly rng: Rng,
    private readonly scheduled: ScheduleFaults,
    private readonly budgetEnd: number,
  ) {
    this.space = live.parts.nemesis.actionSpace();
    this.abstraction = policyAbstraction(live.config);
    this.timeline = live.parts.observation.timeline;
    this.windowStartTs = live.clock.monoNs();
  }

  async run(): Promise<void> {
    const { config, signal, state, clock } = this.live;
    for (state.step = 0; state.step < config.steps; state.step++) {
      const step = state.step;
      const stepStart = this.scheduled.scheduleStart + step * config.stepMs;
      const stepEnd = Math.min(stepStart + config.stepMs, this.budgetEnd);
      // By the clock, not the step's nominal start: a slow fault may have taken the steps' time.
      if (signal.aborted || stepStart >= this.budgetEnd || clock.nowMs() >= this.budgetEnd) break;
      const arrived = await this.awaitState(step);
      const choice = await this.act(step, arrived ? this.observed!.state : undefined, stepEnd);
      await clock.sleep(stepEnd - clock.nowMs(), signal);
      this.closeWindow(step, stepStart, step === 0 ? null : arrived, choice);
    }
    if (this.pending) await this.pending;
  }

  /** Waits a while for the last window's state; true when it arrived (counted either way). */
  private async awaitState(step: number): Promise<boolean> {
    const { signal, state, clock } = this.live;
    if (this.pending) await Promise.race([this.pending, clock.sleep(STATE_WAIT_MS, signal)]);
    const arrived = step > 0 && this.observed?.step === step - 1;
    if (step > 0) {
      state.decisions++;
      if (arrived) state.decisionsWithState++;
    }
    return arrived;
  }

  /** The step's fault and trigger, enacted and armed: none in a quiet period. */
  private async act(step: number, decidedWith: string | undefined, stepEnd: number): Promise<StepChoice> {
    const { config, state } = this.live;
    const { policy, space, rng } = this;
    const quiet = isQuiet(config.pace, step);
    // A quiet period begins (`--pace`): every fault is undone, as the reset does, without
    // waiting for the system — a heal-all, recorded as any fault is, so the history, the
    // report and a bug's schedule (its replay heals where this run did) all say so.
    if (quiet && !isQuiet(config.pace, step - 1))
      await this.scheduled.enact({ f: 'heal-all', value: null }, step);
    const schedule = state.schedule;
    const fault = quiet ? null : policy.decide({ state: decidedWith, space, rng, schedule, step });
    if (fault) await this.scheduled.enact(fault, step);
    const armed = quiet
      ? null
      : (policy.arm?.({
          state: decidedWith,
          space,
          rng,
          schedule,
          step,
          eventTypes: state.eventTypes.byRecency(),
          enacted: fault,
        }) ?? null);
    const armedNow = armed && this.live.clock.nowMs() >= stepEnd ? undefined : armed;
    const fired = armedNow ? await this.runTrigger(step, armedNow, stepEnd) : false;
    return { quiet, decidedWith, fault, armed: armedNow, fired };
  }

  /** Arms `action` for the rest of the step; true when it fired. */
  private async runTrigger(step: number, action: TriggeredAction, stepEnd: number): Promise<boolean> {
    const { signal, state, clock } = this.live;
    const { scheduled } = this;
    const { scheduleStart } = scheduled;
    state.triggersArmed++;
    const trigger = new ArmedTrigger(action, clock.nowMs() - scheduleStart, stepEnd - scheduleStart, {
      ...clusterQueries(this.live.parts),
      skip: (item, reason) => {
        scheduled.skip(item, reason);
      },
      signal,
      clock,
      enact: (f, recorded, atMs, line) => scheduled.enact(f, step, { atMs, ...f, ...recorded }, true, line),
    });
    const fired = await trigger.run(scheduleStart);
    if (fired) state.triggersFired++;
    return fired;
  }

  /** Stores the step's row now, and its state, reward and lesson once the timeline closes its window. */
  private closeWindow(
    step: number,
    stepStart: number,
    stateArrived: boolean | null,
    choice: StepChoice,
  ): void {
    const { state, store, clock } = this.live;
    const windowEndTs = clock.monoNs();
    const row: StepRow = {
      schedule: state.schedule,
      step,
      startedMs: stepStart - state.startMs,
      endedMs: clock.nowMs() - state.startMs,
      // An armed trigger is said beside the step's fault, whether it fired or not.
      fault: choice.quiet
        ? 'quiet'
        : choice.armed
          ? `${describeFault(choice.fault)} + ${describeTrigger(choice.armed)}`
          : choice.fault
            ? describeFault(choice.fault)
            : null,
    };
    store.step({ ...row, state: null, stateArrived, reward: null, metrics: null });
    this.pending = this.timeline.close(step, this.windowStartTs, windowEndTs).then((window) => {
      this.learn(window, row, stateArrived, choice);
    });
    this.windowStartTs = windowEndTs;
  }

  private learn(window: Window, row: StepRow, stateArrived: boolean | null, choice: StepChoice): void {
    const { state, store } = this.live;
    const { policy, abstraction } = this;
    const obs = state.coverage.observe(window, choice.fault);
    const next = obs.states[abstraction];
    const seenBefore = obs.seenBefore[abstraction];
    // As in the artifact: a decision taken without its state (late) teaches nothing about it.
    // A quiet step decided nothing, so it teaches nothing.
    if (!choice.quiet)
      policy.learn({
        state: choice.decidedWith,
        action: choice.fault,
        next: next.id,
        seenBefore,
        ...(policy.arm && choice.armed !== undefined ? { armed: choice.armed, fired: choice.fired } : {}),
      });
    this.observed = { step: row.step, state: next.id };
    for (const [name, s] of Object.entries(obs.states)) {
      if (obs.seenBefore[name] === 0) store.state(name, s.id, s.features, row.schedule, row.step);
    }
    const metrics = state.coverage.snapshot();
    store.step({
      ...row,
      state: next.id,
      stateArrived,
      reward: seenBefore === 0 ? 0 : -1,
      metrics: { ...metrics, seenBefore },
    });
    store.metrics(row.endedMs, row.schedule, row.step, metrics);
  }
}
