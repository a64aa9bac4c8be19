import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { ResourceRegistry } from '../cluster/resources.js';
import { monoNs, sleep } from '../core/clock.js';
import type { Op } from '../core/op.js';
import { UsageError } from '../core/errors.js';
import { Rng } from '../core/random.js';
import { DISK_EXIT_CAUSES } from '../nemesis/disk.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';
import { describeFollowed, type Policy } from '../policy/policy.js';
import { writeStoreIndex } from '../report/store-index.js';
import { writeRunReport } from '../report/write-run-report.js';
import {
  checkRecoveryContract,
  describeRecoveryVerdict,
  measure,
  type PerfSample,
  type RecoveryVerdict,
} from './recovery-contract.js';
import { RunStore } from '../store/run-store.js';
import { History } from '../workload/history.js';
import type { Workload } from '../workload/workload.js';
import type { BugRecord } from './bug.js';
import type { Finding, ScheduleChecker } from './checker.js';
import type { RunConfig } from './config.js';
import type { Observation } from './observation.js';
import { assembleRun, planRun, type RunParts, type Seed } from './create-run.js';
import type { Reporter, RunSummary } from './reporter.js';
import { formatBugSchedule, type RecordedLine, type ScheduleHeader } from './schedule-file.js';
import { describeRecovery, recoveryEvidence } from './recovery-evidence.js';
import { emitter, type Emit } from './_internals/emitter.js';
import { policyAbstraction } from './_internals/policy-abstraction.js';
import { RunState } from './_internals/run-state.js';
import type { LiveRun } from './_internals/live-run.js';
import { runFixed } from './_internals/run-fixed.js';
import { runSteps } from './_internals/run-steps.js';
import { ScheduleFaults } from './_internals/schedule-faults.js';

const STARTUP_READY_MS = 60_000;
/** The recovery contract's warm-up lasts this many measurement windows. */
const WARMUP_WINDOWS = 2;
const PROGRESS_INTERVAL_MS = 500;

/**
 * The healthy stretch before the first fault: `--warmup`, or the recovery contract's yardstick,
 * whichever is longer. A bug's schedule header keeps it so its replay warms up as the run did.
 */
export function effectiveWarmupMs(config: RunConfig): number {
  const contractMs = config.recoveryContract ? WARMUP_WINDOWS * config.recoveryContract.windowMs : 0;
  return Math.max(config.warmupMs, contractMs);
}
/** How long the final reads after a schedule may take (each key is read once). */
const FINAL_READS_MS = 5_000;

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
    const { definition, source, system, fixedSchedule, nodes, seed, policy, seedData, settings, durability } =
      plan;
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
      const { cluster, disks, observation, nemesis, logCheck } = parts;
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
      // The recovery contract's yardstick: the workload on the fault-free cluster; its ops are
      // checked with the first schedule's.
      let carried: Op[] = [];
      let baseline: PerfSample | undefined;
      const warmupMs = effectiveWarmupMs(config);
      if (warmupMs > 0) {
        workload.start('warmup');
        await sleep(warmupMs, this.signal);
        await workload.stop();
        carried = history.takeSegment();
        if (config.recoveryContract) {
          baseline = measure(carried, warmupMs, warmupMs);
          this.emit(
            'message',
            `  warm-up: ${baseline.okPerSec.toFixed(1)} ok/s, p50 ${baseline.p50Ms === null ? '-' : `${baseline.p50Ms.toFixed(1)} ms`} (the recovery contract's yardstick)`,
          );
        } else {
          const ok = carried.filter((op) => op.type === 'ok').length;
          this.emit(
            'message',
            `  warm-up: ${ok} ok ops in ${(warmupMs / 1000).toFixed(1)} s before the first fault`,
          );
        }
      }
      this.state.phase = 'fuzzing';
      const budgetEnd = this.state.startMs + config.timeMs;
      const policyRng = rng.fork('policy');
      for (this.state.schedule = 0; Date.now() < budgetEnd && !this.signal.aborted; this.state.schedule++) {
        const s = this.state.schedule;
        const scheduleStart = Date.now();
        store.scheduleStarted(s, scheduleStart - this.state.startMs);
        observation.setTimeline(!fixedSchedule);
        observation.timeline.discardBefore(monoNs());
        observation.takeScheduleEvents();
        this.state.coverage.resetEpisode();
        policy?.resetEpisode?.();
        workload.start(`s${s}`);
        const scheduled = new ScheduleFaults(live, s, scheduleStart);
        if (fixedSchedule) {
          await runFixed(live, fixedSchedule, scheduled, budgetEnd);
        } else {
          await runSteps(live, policy!, policyRng, scheduled, budgetEnd);
          const followed = policy!.episode?.();
          if (followed !== undefined) {
            store.scheduleFollowed(s, followed);
            this.emit('message', `  schedule ${s + 1}: ${describeFollowed(followed)}`);
          }
        }
        observation.setTimeline(false);
        this.state.phase = 'checking';
        await workload.stop();
        const ops = [...carried.splice(0), ...history.takeSegment()];
        this.state.phase = 'resetting';
        const resetErrors = await nemesis.healAll();
        const recoveryStart = Date.now();
        const recovered = await cluster.waitReady(config.recoveryTimeoutMs, this.signal);
        const recoveryMs = recovered ? Date.now() - recoveryStart : null;
        history.takeSegment(); // the reset's nemesis ops belong to no schedule's check
        this.state.phase = 'checking';
        if (recovered && !this.signal.aborted) {
          await workload.finalReads(FINAL_READS_MS);
          ops.push(...history.takeSegment());
        }
        let slowRecovery: RecoveryVerdict | undefined;
        if (recovered && baseline && config.recoveryContract && !this.signal.aborted) {
          const contract = config.recoveryContract;
          const running = workload;
          let window = 0;
          const verdict = await checkRecoveryContract(
            async () => {
              running.start(`s${s}-after${window++}`);
              await sleep(contract.windowMs, this.signal);
              await running.stop();
              const segment = history.takeSegment();
              ops.push(...segment);
              return segment;
            },
            baseline,
            contract,
            this.signal,
          );
          if (!verdict.met && !this.signal.aborted) slowRecovery = verdict;
        }
        const scheduleEvents = observation.takeScheduleEvents();
        const findings: Finding[] = [];
        const diskFaults = disks;
        const exits = logCheck.scan(nodes, this.state.exits.splice(0), (exit) => {
          const cause = diskFaults?.exitCause(exit.node, exit.ts);
          return cause === undefined ? undefined : DISK_EXIT_CAUSES[cause];
        });
        diskFaults?.forgetEnded();
        for (const f of exits) {
          if (f.kind === 'membership-exit' || f.kind === 'induced-exit') {
            // The harness changed the membership, or made the node's disk fail: its doing, no finding.
            history.record({
              type: 'info',
              process: 'nemesis',
              f: f.kind,
              value: [f.node],
              error: f.message,
            });
            if (f.kind === 'induced-exit') {
              this.state.inducedExits++;
              this.emit('message', `  schedule ${s + 1}: ${f.message} (an induced exit, not a crash)`);
            }
            continue;
          }
          findings.push({ kind: 'crash', name: f.kind, message: f.message, evidence: f });
        }
        if (!recovered && !this.signal.aborted) {
          const evidence = await recoveryEvidence(cluster, system, resetErrors, config.opTimeoutMs);
          findings.push({
            kind: 'recovery',
            name: 'no-recovery',
            message: `the system did not serve again within ${config.recoveryTimeoutMs / 1000} s after all faults were healed: ${describeRecovery(evidence)}`,
            evidence,
          });
        }
        if (slowRecovery && config.recoveryContract) {
          findings.push({
            kind: 'recovery',
            name: 'slow-recovery',
            message: describeRecoveryVerdict(slowRecovery, config.recoveryContract),
            evidence: slowRecovery,
          });
        }
        /** What each checker found, as `kind/name` (none: it passed), kept with the schedule in run.db. */
        const checks: Record<string, string[]> = {};
        for (const checker of this.checkers) {
          const found = await checker.check({
            schedule: s,
            ops,
            faults: scheduled.faults,
            events: scheduleEvents,
            runDir: store.dir,
            system,
            nodeCount,
            ...(durability !== undefined ? { durability } : {}),
          });
          checks[checker.name] = found.map((f) => `${f.kind}/${f.name}`);
          findings.push(...found);
        }
        for (const note of findings.filter((f) => f.severity === 'note')) {
          history.record({
            type: 'info',
            process: 'nemesis',
            f: `${note.kind}/${note.name}`,
            value: null,
            error: note.message,
          });
          this.emit('message', `  schedule ${s + 1}: ${note.message}`);
        }
        for (const finding of findings.filter((f) => f.severity !== 'note')) {
          this.recordBug(store, finding, s, scheduled.faults, scheduled.attempted, {
            seed,
            nodes: nodeCount,
            system: source,
            workload: plan.workload.source,
            settings,
          });
        }
        if (!recovered && !this.signal.aborted) {
          // Healing was not enough: start the cluster afresh, or the rest of the campaign would
          // only find the same stuck cluster again.
          this.state.phase = 'resetting';
          history.record({ type: 'info', process: 'nemesis', f: 'hard-reset', value: cluster.nodes });
          await cluster.restartFresh();
          const fresh = await cluster.waitReady(config.recoveryTimeoutMs, this.signal);
          history.takeSegment();
          if (!fresh && !this.signal.aborted) {
            throw new Error(
              `${definition.name} did not serve even after a fresh start of every node: see ${join(store.dir, 'nodes')}`,
            );
          }
        }
        store.scheduleEnded(
          s,
          Date.now() - this.state.startMs,
          ops.length,
          { findings: findings.length, checks },
          recoveryMs,
        );
        // Every schedule, so a run killed later still seeds the next one (`--seed-from`).
        if (policy) store.savePolicy(policy.name, policy.save());
        store.saveLogTemplates(observation.logEvents.drain.templates());
        this.state.phase = 'fuzzing';
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

  private recordBug(
    store: RunStore,
    finding: Finding,
    schedule: number,
    faults: readonly ScheduleEntry[],
    attempted: readonly RecordedLine[],
    /** `system` is what a replay loads: the built-in name, or the module's absolute path. */
    run: {
      readonly seed: number;
      readonly nodes: number;
      readonly system: string;
      /** What a replay loads: the built-in name, or the workload module's absolute path. */
      readonly workload: string;
      readonly settings: Readonly<Record<string, string>>;
    },
  ): void {
    const seed = run.seed;
    const row = {
      schedule,
      kind: finding.kind,
      name: finding.name,
      message: finding.message,
      evidence: finding.evidence,
      faultSchedule: faults,
      seed,
      foundAtMs: Date.now() - this.state.startMs,
    };
    const id = store.bug(row);
    const dir = join(store.dir, 'bugs', String(id));
    mkdirSync(dir, { recursive: true });
    const c = this.config;
    const warmupMs = effectiveWarmupMs(c);
    const header: ScheduleHeader = {
      system: run.system,
      nodes: run.nodes,
      seed,
      bugs: c.bugs,
      ...(Object.keys(run.settings).length > 0 ? { settings: run.settings } : {}),
      ...(c.durability !== undefined ? { durability: c.durability } : {}),
      workload: run.workload,
      ...(c.concurrency !== undefined ? { concurrency: c.concurrency } : {}),
      rate: c.rate,
      steps: c.steps,
      stepMs: c.stepMs,
      network: c.network,
      ...(warmupMs > 0 ? { warmupMs } : {}),
      schedule,
      finding: { kind: finding.kind, name: finding.name },
    };
    writeFileSync(join(dir, 'schedule.jsonl'), formatBugSchedule(header, attempted));
    // A schedule that reacts to events replays only from its own text: keep it beside what it did.
    if (this.config.schedule !== undefined)
      copyFileSync(this.config.schedule, join(dir, 'source-schedule.jsonl'));
    writeFileSync(join(dir, 'evidence.json'), JSON.stringify(finding.evidence, null, 2) + '\n');
    let html: string | undefined;
    if (finding.html !== undefined) {
      html = join(dir, 'check.html');
      writeFileSync(html, finding.html);
      store.setBugHtml(id, html);
    }
    const bug: BugRecord = { ...row, id, dir, ...(html !== undefined ? { html } : {}) };
    this.state.bugs.push(bug);
    this.emit('bug', bug);
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
