import { join, resolve } from 'node:path';

import { ResourceRegistry } from '../cluster/resources.js';
import { monoNs } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { Rng } from '../core/random.js';
import type { Policy } from '../policy/policy.js';
import { writeStoreIndex } from '../report/store-index.js';
import { writeRunReport } from '../report/write-run-report.js';
import { RunStore } from '../store/run-store.js';
import { History } from '../workload/history.js';
import type { Workload } from '../workload/workload.js';
import type { ScheduleChecker } from './checker.js';
import type { RunConfig } from './config.js';
import type { Observation } from './observation.js';
import { assembleRun, planRun, type RunParts, type Seed } from './create-run.js';
import type { Reporter, RunSummary } from './reporter.js';
import { emitter, type Emit } from './_internals/emitter.js';
import type { LiveRun } from './_internals/live-run.js';
import { policyAbstraction } from './_internals/policy-abstraction.js';
import { runSchedule } from './_internals/run-schedule.js';
import { RunState } from './_internals/run-state.js';
import { warmUp } from './_internals/warm-up.js';

export { effectiveWarmupMs } from './_internals/effective-warmup-ms.js';

const STARTUP_READY_MS = 60_000;
const PROGRESS_INTERVAL_MS = 500;

export interface CampaignOptions {
  readonly config: RunConfig;
  readonly reporters: readonly Reporter[];
  readonly signal: AbortSignal;
  /** The checks of each schedule; default: the plan's (the workload's history checker, the invariants). */
  readonly checkers?: readonly ScheduleChecker[];
  /** Resources are recorded here; exposed so a crash handler can release them and record the status. */
  readonly onRegistry?: (registry: ResourceRegistry, store: RunStore) => void;
}

function newRunId(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 0x10000).toString(36)}`;
}

/**
 * One fuzzing campaign: start the cluster and the clients, then schedule after schedule pick a
 * fault per step, enact it, reset, and check the schedule's history and logs.
 */
export class Campaign {
  private readonly config: RunConfig;
  private readonly signal: AbortSignal;
  private checkers: readonly ScheduleChecker[] = [];
  private readonly state = new RunState();
  private readonly emit: Emit;
  private observation: Observation | undefined;
  private wantsDisk = false;

  constructor(private readonly options: CampaignOptions) {
    this.config = options.config;
    this.signal = options.signal;
    this.emit = emitter(options.reporters);
  }

  async run(): Promise<RunSummary> {
    const config = this.config;
    const plan = await planRun(config);
    const { definition, source, fixedSchedule, nodes, seed, policy, seedData, settings, durability } = plan;
    const nodeCount = nodes.length;
    this.checkers = this.options.checkers ?? plan.checkers;
    this.wantsDisk = plan.diskLayerBinary !== undefined;
    const rng = new Rng(seed);
    const runId = newRunId();
    const registry = new ResourceRegistry(runId);
    let store: RunStore;
    try {
      store = RunStore.create(
        resolve(config.store),
        {
          id: runId,
          system: definition.name,
          seed,
          policy: fixedSchedule ? 'schedule' : config.policy,
          // The settings with their defaults, and the contract checked (the system's when not stated).
          config: {
            ...config,
            system: source,
            workload: plan.workload.source,
            seed,
            nodes: nodeCount,
            settings,
            ...(durability !== undefined ? { durability: durability.level } : {}),
          },
        },
        (dir) => {
          registry.setRunDir(dir);
        },
      );
    } catch (e) {
      registry.releaseAll();
      throw e;
    }
    this.options.onRegistry?.(registry, store);
    this.state.startMs = Date.now();
    const history = new History(monoNs(), (op) => {
      store.appendOp(op);
    });
    let parts: RunParts | undefined;
    let workload: Workload | undefined;
    let status: RunSummary['status'] = 'complete';
    let error: string | undefined;
    let usageError: UsageError | undefined;
    const ticker = setInterval(() => {
      this.emitProgress(workload);
    }, PROGRESS_INTERVAL_MS);
    try {
      this.emit('runStarted', {
        runDir: store.dir,
        system: definition.name,
        seed,
        policy: policy?.name ?? 'schedule',
        nodes,
      });
      if (policy && seedData) {
        this.applySeed(policy, seedData);
        this.emit('message', describeSeed(seedData));
      }
      parts = await assembleRun(plan, {
        config,
        store,
        registry,
        runId,
        history,
        rng,
        onExit: (exit) => this.state.exits.push(exit),
      });
      const { cluster, observation } = parts;
      workload = parts.workload;
      this.observation = observation;
      if (policy?.arm) {
        observation.onEvent((event) => {
          this.state.eventTypes.observe(event);
        });
      }
      const live: LiveRun = {
        config,
        plan,
        signal: this.signal,
        emit: this.emit,
        state: this.state,
        store,
        history,
        parts,
        checkers: this.checkers,
      };
      await cluster.startAll();
      if (!(await cluster.waitReady(STARTUP_READY_MS, this.signal))) {
        if (this.signal.aborted) throw new Interrupted();
        throw new UsageError(
          'not-ready',
          `${definition.name} did not serve requests within ${STARTUP_READY_MS / 1000} s of starting: see ${join(store.dir, 'nodes')}`,
        );
      }
      const warm = await warmUp(live);
      this.state.phase = 'fuzzing';
      const budgetEnd = this.state.startMs + config.timeMs;
      const policyRng = rng.fork('policy');
      for (this.state.schedule = 0; Date.now() < budgetEnd && !this.signal.aborted; this.state.schedule++) {
        await runSchedule(live, warm, budgetEnd, policyRng);
        if (fixedSchedule || (config.stopOnBug && this.state.bugs.length > 0)) {
          this.state.schedule++;
          break;
        }
      }
      if (this.signal.aborted) status = 'interrupted';
      if (policy) store.savePolicy(policy.name, policy.save());
      store.saveLogTemplates(observation.logEvents.drain.templates());
    } catch (e) {
      if (e instanceof Interrupted) status = 'interrupted';
      else {
        status = 'error';
        error = e instanceof Error ? e.message : String(e);
        if (e instanceof UsageError) usageError = e;
      }
    } finally {
      clearInterval(ticker);
      this.state.phase = 'stopping';
      workload?.interrupt();
      await workload?.stop().catch(() => undefined);
      await this.observation?.stop().catch(() => undefined);
      parts?.clocks?.close();
      await parts?.cluster.close().catch(() => undefined);
      await parts?.network.close().catch(() => undefined);
      registry.releaseResources();
    }
    const counts = workload?.counts ?? { ok: 0, fail: 0, info: 0 };
    const summary: RunSummary = {
      runDir: store.dir,
      status,
      system: definition.name,
      seed,
      policy: policy?.name ?? 'schedule',
      elapsedMs: Date.now() - this.state.startMs,
      schedules: this.state.schedule,
      ops: { ...counts },
      faults: this.state.faultCount,
      bugs: this.state.bugs,
      metrics: {
        ...this.state.coverage.snapshot(),
        fuzzer_peak_rss_mb: Math.round(this.state.peakRssBytes / 2 ** 20),
        // Events the timeline dropped to stay within its memory bound (a flood from the system).
        events_shed: this.observation?.timeline.stats.shed ?? 0,
        ...(this.wantsDisk ? { induced_exits: this.state.inducedExits } : {}),
        ...(this.state.decisions > 0
          ? {
              state_arrival_pct:
                Math.round((1000 * this.state.decisionsWithState) / this.state.decisions) / 10,
            }
          : {}),
        ...(policy?.arm
          ? {
              triggers_armed: this.state.triggersArmed,
              triggers_fired: this.state.triggersFired,
              ...(this.state.triggersArmed > 0
                ? {
                    triggers_fired_pct:
                      Math.round((1000 * this.state.triggersFired) / this.state.triggersArmed) / 10,
                  }
                : {}),
            }
          : {}),
      },
      ...(error !== undefined ? { error } : {}),
    };
    store.finish(status, summary);
    store.close();
    // Only now: until the final status is on disk, `mallory cleanup` must be able to find the run.
    registry.removeFile();
    if (usageError) throw usageError;
    const reported: RunSummary = {
      ...summary,
      ...(await this.writeReport(store.dir, resolve(config.store))),
    };
    this.emit('runEnded', reported);
    return reported;
  }

  /**
   * The run's report.html and results.json, and the store's index refreshed, once the run is
   * stored; a report that cannot be written is said, and loses nothing (`mallory report` retries).
   */
  private async writeReport(
    runDir: string,
    storeDir: string,
  ): Promise<Pick<RunSummary, 'report' | 'reportError'>> {
    try {
      const { html } = await writeRunReport(runDir);
      writeStoreIndex(storeDir);
      return { report: html };
    } catch (e) {
      return { reportError: e instanceof Error ? e.message : String(e) };
    }
  }

  private applySeed(policy: Policy, seed: Seed): void {
    policy.load(seed.values);
    for (const s of seed.states) {
      this.state.coverage.seed(s.abstraction, s.id, JSON.parse(s.features) as string[], s.visits);
    }
  }

  private emitProgress(workload: Workload | undefined): void {
    this.state.peakRssBytes = Math.max(this.state.peakRssBytes, process.memoryUsage.rss());
    const counts = workload?.counts ?? { ok: 0, fail: 0, info: 0 };
    this.emit('progress', {
      elapsedMs: Date.now() - this.state.startMs,
      budgetMs: this.config.timeMs,
      schedule: this.state.schedule,
      step: this.state.step,
      steps: this.config.steps,
      ok: counts.ok,
      fail: counts.fail,
      info: counts.info,
      faults: this.state.faultCount,
      bugs: this.state.bugs.length,
      phase: this.state.phase,
      states: this.state.coverage.snapshot()[`states_${policyAbstraction(this.config)}`] ?? 0,
    });
  }
}

class Interrupted extends Error {}

function describeSeed(seed: Seed): string {
  const what = `seeded from ${seed.runDir} (${seed.status}): ${seed.values.length} policy values, ${seed.states.length} states, ${seed.templates.length} log templates`;
  return seed.values.length > 0
    ? what
    : `${what} — it saved no policy values (it ended before its first schedule did): the policy starts fresh`;
}
