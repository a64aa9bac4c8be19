import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { registryDir, ResourceRegistry } from '../cluster/resources.js';
import { inAdapterScope } from '../core/client-scope.js';
import { type Clock, realClock } from '../core/clock.js';
import { Rng } from '../core/random.js';
import { realWorkProbe } from '../sim/real-work.js';
import { type RunPlace, type RunStore, timestampName } from '../store/run-store.js';
import { History } from '../workload/history.js';
import type { Workload } from '../workload/workload.js';
import type { ScheduleChecker } from './checker.js';
import type { RunConfig } from './config.js';
import { assembleRun, planRun, type RunParts, type RunPlan } from './create-run.js';
import type { Reporter, RunSummary } from './reporter.js';
import { applySeed } from './_internals/apply-seed.js';
import { Exchange, storedStates } from './exchange.js';
import { emitter, type Emit } from './_internals/emitter.js';
import { finishRun } from './_internals/finish-run.js';
import type { LiveRun } from './_internals/live-run.js';
import { openStore } from './_internals/open-store.js';
import { policyAbstraction } from './_internals/policy-abstraction.js';
import { outcomeOf, type RunOutcome } from './_internals/run-outcome.js';
import { runSchedules } from './_internals/run-schedules.js';
import { RoleRecorder } from './_internals/record-roles.js';
import { RunState } from './_internals/run-state.js';
import { saveLearning } from './_internals/save-learning.js';
import { startCluster } from './_internals/start-cluster.js';
import { stopRun } from './_internals/stop-run.js';
import { stopSignalOf } from './stop-signal.js';
import { simulatedOf } from './_internals/simulated-of.js';
import { summarize } from './_internals/summarize.js';
import { warmUp } from './_internals/warm-up.js';

export { effectiveWarmupMs } from './_internals/effective-warmup-ms.js';

const PROGRESS_INTERVAL_MS = 500;

export interface CampaignOptions {
  readonly config: RunConfig;
  readonly reporters: readonly Reporter[];
  readonly signal: AbortSignal;
  /** The checks of each schedule; default: the plan's (the workload's history checker, the invariants). */
  readonly checkers?: readonly ScheduleChecker[];
  /** Resources are recorded here; exposed so a crash handler can release them and record the status. */
  readonly onRegistry?: (registry: ResourceRegistry, store: RunStore) => void;
  /** The time the campaign's waits and stamps read (default the host's; a simulated run passes its world's). */
  readonly clock?: Clock;
}

/** A simulated run's name: its storage contract and seed. */
function simRunName(plan: RunPlan): string | undefined {
  return plan.placement.kind === 'sim'
    ? `sim-${plan.placement.contract}-${plan.seed.toString(36)}`
    : undefined;
}

function newRunId(plan: RunPlan): string {
  const sim = simRunName(plan);
  if (sim !== undefined) {
    // A simulated run is its seed's; a second one of the same seed running at once (its registry
    // there) takes this process's id besides, so neither's registry replaces the other's.
    return existsSync(join(registryDir(), `${sim}.jsonl`)) ? `${sim}-${process.pid.toString(36)}` : sim;
  }
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 0x10000).toString(36)}`;
}

/**
 * Where a run is stored and what its stamps read: a simulated run's directory is named after its
 * virtual start and its seed (`20260101T000000-000Z-sim-C2-5`), its `started_at` and `ended_at`
 * are virtual time, so two runs of one seed write the same; a real run's are the host's.
 */
function runPlace(plan: RunPlan, clock: Clock): RunPlace {
  const sim = simRunName(plan);
  if (sim === undefined) return {};
  const now = (): Date => new Date(clock.nowMs());
  return { now, name: `${timestampName(now())}-${sim}` };
}

/** The figures of a simulated run in its metrics: virtual and wall seconds, and their ratio. */
function simMetrics(virtualMs: number, wallMs: number): Record<string, number> {
  const round = (x: number): number => Math.round(x * 100) / 100;
  return {
    sim_virtual_s: round(virtualMs / 1000),
    sim_wall_s: round(wallMs / 1000),
    sim_speedup: round(virtualMs / Math.max(1, wallMs)),
  };
}

/**
 * One fuzzing campaign: start the cluster and the clients, then schedule after schedule pick a
 * fault per step, enact it, reset, and check the schedule's history and logs.
 */
export class Campaign {
  private readonly config: RunConfig;
  private readonly signal: AbortSignal;
  private readonly state = new RunState();
  private readonly emit: Emit;
  private clock: Clock;

  constructor(private readonly options: CampaignOptions) {
    this.config = options.config;
    this.signal = options.signal;
    this.emit = emitter(options.reporters);
    this.clock = options.clock ?? realClock;
  }

  /**
   * The campaign's phases in the order they run: plan, open the store, build the parts, start the
   * cluster, warm up, run the schedules, save what was learnt; whatever happened, stop everything;
   * then summarize and finish the stored run.
   */
  async run(): Promise<RunSummary> {
    const plan = await planRun(this.config);
    // What a client throws outside any call names the adapter it came from (core/client-scope.ts).
    const run = (): Promise<RunSummary> => inAdapterScope(plan.definition.name, () => this.runPlan(plan));
    if (plan.sim === undefined) return run();
    // A simulated run: every wait of the campaign is an event of the world, which runs until the
    // campaign ends, holding its time while the campaign awaits real work (a file, a thread).
    this.clock = plan.sim.clock;
    const holding = realWorkProbe();
    return plan.sim.kv.world.drive(run(), holding);
  }

  private async runPlan(plan: RunPlan): Promise<RunSummary> {
    const { config, signal, state, emit, clock } = this;
    const rng = new Rng(plan.seed);
    const runId = newRunId(plan);
    const wallStartMs = performance.now();
    const registry = new ResourceRegistry(runId);
    const store = openStore(plan, config, runId, registry, runPlace(plan, clock));
    this.options.onRegistry?.(registry, store);
    state.startMs = clock.nowMs();
    const heardStop = (): void => {
      const stopSignal = stopSignalOf(signal);
      if (stopSignal !== undefined) state.stop ??= { signal: stopSignal, ts: clock.monoNs() };
    };
    heardStop();
    signal.addEventListener('abort', heardStop, { once: true });
    const history = new History(
      clock.monoNs(),
      (op) => {
        store.appendOp(op);
      },
      clock,
    );
    let parts: RunParts | undefined;
    let outcome: RunOutcome = { status: 'complete' };
    const stopTicker = clock.every(PROGRESS_INTERVAL_MS, () => {
      this.emitProgress(parts?.workload);
    });
    try {
      const { definition, seed, policy, seedData, nodes } = plan;
      emit('runStarted', {
        runDir: store.dir,
        system: definition.name,
        seed,
        policy: policy?.name ?? 'schedule',
        nodes,
      });
      if (policy && seedData) applySeed(policy, seedData, state.coverage, emit);
      parts = await assembleRun(plan, {
        config,
        store,
        registry,
        runId,
        history,
        rng,
        onExit: (exit) => state.exits.push(exit),
        signal,
      });
      const roles = new RoleRecorder(store.dir, state.startMs, clock);
      parts.observation.onEvent(roles.hear);
      parts.nemesis.onLeader(roles.leaderAnswered);
      if (policy?.arm) {
        parts.observation.onEvent((event) => {
          state.eventTypes.observe(event);
        });
      }
      const checkers = this.options.checkers ?? plan.checkers;
      const exchange =
        config.exchange !== undefined && policy !== undefined
          ? new Exchange({
              dir: config.exchange,
              runDir: store.dir,
              runId,
              system: definition.name,
              policy,
              policyAbstraction: policyAbstraction(config),
              coverage: state.coverage,
              drain: parts.observation.logEvents.drain,
              ownStates: () => storedStates(store.dir, policy.name),
              warn: (line) => {
                emit('message', `  ${line}`);
              },
            })
          : undefined;
      const live: LiveRun = {
        config,
        plan,
        signal,
        clock,
        emit,
        state,
        store,
        history,
        parts,
        checkers,
        ...(exchange ? { exchange } : {}),
      };
      await startCluster(live);
      const warm = await warmUp(live);
      await runSchedules(live, warm, rng);
      if (signal.aborted) outcome = { status: 'interrupted' };
      saveLearning(live);
    } catch (e) {
      outcome = outcomeOf(e);
    } finally {
      stopTicker();
      signal.removeEventListener('abort', heardStop);
      state.phase = 'stopping';
      await stopRun(parts, registry);
    }
    const endMs = clock.nowMs();
    const summarized = summarize(plan, store, state, parts, outcome, config.timeMs, endMs);
    const simulated = simulatedOf(plan, config);
    const summary =
      plan.sim === undefined
        ? summarized
        : {
            ...summarized,
            metrics: {
              ...summarized.metrics,
              ...simMetrics(endMs - state.startMs, performance.now() - wallStartMs),
            },
            ...(simulated !== undefined ? { sim: { ...simulated, digest: plan.sim.kv.world.digest() } } : {}),
          };
    return finishRun(summary, outcome, { store, registry, config, emit });
  }

  private emitProgress(workload: Workload | undefined): void {
    const { config, state } = this;
    state.peakRssBytes = Math.max(state.peakRssBytes, process.memoryUsage.rss());
    const counts = workload?.counts ?? { ok: 0, fail: 0, info: 0 };
    this.emit('progress', {
      elapsedMs: this.clock.nowMs() - state.startMs,
      budgetMs: config.timeMs,
      schedule: state.schedule,
      step: state.step,
      steps: config.steps,
      ok: counts.ok,
      fail: counts.fail,
      info: counts.info,
      refused: counts.refused ?? 0,
      faults: state.faultCount,
      bugs: state.bugs.length,
      phase: state.phase,
      states: state.coverage.snapshot()[`states_${policyAbstraction(config)}`] ?? 0,
    });
  }
}
