import type { NodeExit } from '../../cluster/cluster.js';
import { type DeathWhileWritesRefused, durabilityContract, refusesWrites } from '../../check/durability.js';
import type { NetworkBackend } from '../../cluster/net/backend.js';
import { NS_PER_MS } from '../../core/clock.js';
import type { Event } from '../../core/event.js';
import type { Op } from '../../core/op.js';
import type { InducedCause } from '../../check/logs.js';
import { DISK_EXIT_CAUSES, type ErrorWindow } from '../../nemesis/disk.js';
import { type LeaderChange, withLeaderAtStart } from '../../check/failover-loss.js';
import type { Finding } from '../checker.js';
import { describeRecoveryVerdict, type RecoveryVerdict } from '../recovery-contract.js';
import { disksLostBeyondContract, expectedNoRecovery } from '../recovery-exceptions.js';
import { recoveryTimeoutMs } from '../recovery-timeout.js';
import { oneFindingPerCause } from '../root-cause.js';
import { markKnownCrashes, markKnownNoRecovery } from '../known-issues.js';
import { describeAttempt, describeRecovery, keptAttempts, recoveryEvidence } from '../recovery-evidence.js';
import type { CheckerVerdict } from '../../core/verdict.js';
import { exitStopSignal, STOP_SIGNAL_SETTLE_MS } from '../stop-signal.js';
import type { Recovery } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';
import type { ScheduleFaults } from './schedule-faults.js';

/** What a schedule's checks found, and what each checker said. */
export interface ScheduleFindings {
  /** One per root cause (`oneFindingPerCause`): a crash with its exit and the recovery it cost is one. */
  readonly findings: readonly Finding[];
  /** What each checker found, as `kind/name` (none: it passed), kept with the schedule in run.db. */
  readonly checks: Readonly<Record<string, string[]>>;
  /** What each check said: the nodes' crashes, their recovery, then each checker in turn. */
  readonly verdicts: readonly CheckerVerdict[];
}

/**
 * Everything wrong with one schedule, in this order: the nodes' crashes (from their logs and
 * exits), a system that did not recover or recovered too slowly, and each checker's findings on
 * the schedule's ops, faults and events.
 */
export async function collectFindings(
  live: LiveRun,
  scheduled: ScheduleFaults,
  ops: readonly Op[],
  recovery: Recovery,
  slowRecovery: RecoveryVerdict | undefined,
): Promise<ScheduleFindings> {
  const { config, signal, parts } = live;
  const scheduleEvents = parts.observation.takeScheduleEvents();
  await settleExits(live);
  // A crash the system's declared known issue explains is a note naming the issue.
  const deaths: DeathWhileWritesRefused[] = [];
  const known = markKnownCrashes(
    crashFindings(live, scheduled, deaths),
    live.plan.system.knownIssues ?? [],
    scheduled.faults,
  );
  const findings: Finding[] = known.findings;
  const verdicts: CheckerVerdict[] = [nodeVerdict('crash', findings)];
  const recoveryFindings: Finding[] = [];
  if (!recovery.recovered && !signal.aborted) {
    recoveryFindings.push(
      markKnownNoRecovery(await recoveryFinding(live, recovery, scheduled.faults, deaths), known.known),
    );
  }
  if (slowRecovery && config.recoveryContract) {
    recoveryFindings.push({
      kind: 'recovery',
      name: 'slow-recovery',
      message: describeRecoveryVerdict(slowRecovery, config.recoveryContract),
      evidence: slowRecovery,
    });
  }
  findings.push(...recoveryFindings);
  verdicts.push(
    !recovery.recovered && signal.aborted
      ? {
          ...nodeVerdict('recovery', []),
          valid: 'unknown',
          reason: 'the run was stopped before the system served again',
        }
      : nodeVerdict('recovery', recoveryFindings),
  );
  const checks = await runCheckers(live, scheduled, deaths, ops, scheduleEvents, findings, verdicts);
  return { findings: oneFindingPerCause(findings), checks, verdicts };
}

/** The verdict of a check of the nodes themselves (their crashes, their recovery). */
function nodeVerdict(checker: string, found: readonly Finding[]): CheckerVerdict {
  return { ...verdictOf(checker, found), ops: null, ms: null };
}

/** Invalid if it found a bug; else unknown if it could not tell (saying why); else valid. */
function verdictOf(checker: string, found: readonly Finding[]): Omit<CheckerVerdict, 'ops' | 'ms'> {
  const names = found.map((f) => `${f.kind}/${f.name}`);
  if (found.some((f) => f.severity !== 'note')) return { checker, valid: false, findings: names };
  const unknown = found.filter((f) => f.unknown === true);
  if (unknown.length > 0) {
    return { checker, valid: 'unknown', reason: unknown.map((f) => f.message).join('; '), findings: names };
  }
  return { checker, valid: true, findings: names };
}

/**
 * A system that did not serve again within the recovery timeout: `late-recovery` when it served
 * within the grace after it (half the timeout), saying how late; `no-recovery` when it never did. Either says
 * what the system's own readiness check answered last before it served (or gave up), and keeps
 * every poll; `no-recovery` adds each node's answer when asked once more.
 */
async function recoveryFinding(
  live: LiveRun,
  recovery: Recovery,
  faults: ScheduleFaults['faults'],
  deaths: readonly DeathWhileWritesRefused[],
): Promise<Finding> {
  const { config, plan, parts } = live;
  const timeoutMs = recoveryTimeoutMs(config, plan.system);
  const bound = `${timeoutMs / 1000} s`;
  const polls = keptAttempts(recovery.attempts);
  const failed = recovery.attempts.filter((a) => !a.ready);
  const lastFailed = failed[failed.length - 1];
  const said =
    lastFailed === undefined
      ? 'no readiness check ran'
      : `the last of ${failed.length} readiness checks that said no, ${describeAttempt(lastFailed)}`;
  if (recovery.lateMs !== null) {
    const late = (recovery.lateMs - timeoutMs) / 1000;
    return {
      kind: 'recovery',
      name: 'late-recovery',
      message: `the system served again ${(recovery.lateMs / 1000).toFixed(1)} s after all faults were healed, ${late.toFixed(1)} s past the ${bound} bound (late, not stuck): ${said}`,
      evidence: {
        resetErrors: recovery.resetErrors,
        servedAfterMs: recovery.lateMs,
        timeoutMs: recovery.timeoutMs,
        ...polls,
      },
    };
  }
  const lastHeal = parts.nemesis.lastHeal();
  const asked = await recoveryEvidence(parts.cluster, plan.system, recovery.resetErrors, config.opTimeoutMs, {
    ...(recovery.attempts.length > 0 ? { lastAttempt: recovery.attempts[recovery.attempts.length - 1] } : {}),
    ...(lastHeal !== undefined ? { lastHeal } : {}),
  });
  const evidence = { ...asked, timeoutMs: recovery.timeoutMs, ...polls };
  const waited = (timeoutMs * 1.5) / 1000;
  const message = `the system did not serve again within ${waited} s after all faults were healed (the ${bound} bound and half as long again): ${said}; asked once more after that: ${describeRecovery(evidence)}`;
  const expected = await expectedNoRecovery(plan.system, faults, parts.cluster, config.opTimeoutMs);
  if (expected !== undefined) {
    return {
      kind: 'recovery',
      name: 'no-recovery',
      severity: 'note',
      message: `expected, a declared exception to the recovery contract: ${expected.why}; ${expected.shown} (after ${expected.after}): ${message}`,
      evidence: { ...evidence, exception: expected },
    };
  }
  const beyond = disksLostBeyondContract(
    durabilityContract(plan.durability, plan.system.durability),
    plan.system.name,
    faults,
    plan.nodes.length,
    deaths,
  );
  if (beyond !== undefined) {
    return {
      kind: 'recovery',
      name: 'no-recovery',
      severity: 'note',
      message: `${beyond.words}: ${message}`,
      evidence: { ...evidence, durability: beyond.evidence },
    };
  }
  return { kind: 'recovery', name: 'no-recovery', message, evidence };
}

/**
 * Waits until the latest unexpected exit (one that came during the wait included) is
 * `STOP_SIGNAL_SETTLE_MS` old, unless the run is stopped already: a signal sent to the fuzzer and
 * its nodes at once may reach the fuzzer after a node's exit was handled, and that exit is then
 * the stop's, not a crash.
 */
export async function settleExits(live: Pick<LiveRun, 'state' | 'signal' | 'clock'>): Promise<void> {
  const { state, signal, clock } = live;
  // Again after each wait: an exit that came during it is judged too, and must be as old.
  while (!signal.aborted) {
    const unexpected = state.exits.filter((e) => !e.expected).map((e) => e.ts);
    if (unexpected.length === 0) return;
    const waitMs = STOP_SIGNAL_SETTLE_MS - (clock.monoNs() - Math.max(...unexpected)) / NS_PER_MS;
    if (waitMs <= 0) return;
    await clock.sleep(waitMs, signal);
  }
}

/**
 * The crashes in the nodes' logs and exits since the last schedule. An exit the harness caused (a
 * membership change, a disk it made fail, connections it reset) or the run's stop signal caused is
 * no finding: it is said in the history instead, and for a failing disk with the crash text that
 * announced it (a fail-stop, see `LogCheck.scan`).
 */
function crashFindings(
  live: LiveRun,
  scheduled: Pick<ScheduleFaults, 'schedule' | 'scheduleStart'>,
  deaths: DeathWhileWritesRefused[],
): Finding[] {
  const { state, plan, parts, history, emit } = live;
  const schedule = scheduled.schedule;
  const diskFaults = parts.disks;
  const causeOf = (window: ErrorWindow): InducedCause => ({
    cause: DISK_EXIT_CAUSES[window.cause],
    diskFault: window.cause,
    ...(window.fromBytes !== undefined ? { fromBytes: window.fromBytes } : {}),
    ...(window.untilBytes !== undefined ? { untilBytes: window.untilBytes } : {}),
  });
  const exits = parts.logCheck.scan(
    plan.nodes,
    state.exits.splice(0),
    (exit) => {
      const window = diskFaults?.errorAt(exit.node, exit.ts, exit.startedNs);
      if (window === undefined) return connectionCutBefore(parts.network, exit);
      return causeOf(window);
    },
    (exit) => exitStopSignal(state.stop, exit),
    (exit) => (diskFaults?.reportWindows(exit.node, exit.ts, exit.startedNs) ?? []).map(causeOf),
  );
  diskFaults?.forgetEnded();
  const findings: Finding[] = [];
  for (const f of exits) {
    if (f.kind === 'stop-exit') {
      history.record({ type: 'info', process: 'nemesis', f: f.kind, value: [f.node], error: f.message });
      emit('message', `  schedule ${schedule + 1}: ${f.message} (not a crash)`);
      continue;
    }
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
        state.inducedExits++;
        // It died while its disk refused writes: what it held in memory for them is gone.
        if (refusesWrites(f.diskFault))
          deaths.push({
            atMs: live.clock.nowMs() - scheduled.scheduleStart,
            timeNs: (f.ts ?? history.startNs) - history.startNs,
            node: f.node,
            because: f.diskFault ?? '',
          });
        emit('message', `  schedule ${schedule + 1}: ${f.message} (an induced exit, not a crash)`);
      }
      continue;
    }
    findings.push({ kind: 'crash', name: f.kind, message: f.message, evidence: f });
  }
  return findings;
}

/**
 * The declared leader-change and split-brain role events among a schedule's, at history time (ns
 * since the run began), after the leader the schedule was under (`withLeaderAtStart`: who answered
 * as leader before its first fault, from that moment).
 */
function leaderChanges(live: LiveRun, scheduled: ScheduleFaults, events: readonly Event[]): LeaderChange[] {
  const declared = live.plan.system.failoverLoss;
  const sb = declared?.splitBrain;
  const types = new Set([
    ...(declared?.events ?? []),
    ...(sb !== undefined ? [sb.promoted, sb.started, ...sb.converged] : []),
  ]);
  const changes = events
    .filter((e) => e.source === 'log' && types.has(e.type))
    .map((e) => {
      const role = e.attrs?.role;
      return {
        timeNs: e.ts - live.history.startNs,
        node: e.node,
        type: e.type,
        ...(typeof role === 'string' ? { role } : {}),
      };
    });
  const first = scheduled.faults.find((f) => f.leader !== undefined);
  if (declared === undefined || first === undefined) return changes;
  const atNs = (scheduled.scheduleStart + first.atMs - live.state.startMs) * NS_PER_MS;
  return withLeaderAtStart(changes, first.leader, atNs, declared);
}

/**
 * How long after the network backend reset a node's connections an exit of that node is put down
 * to it: the reset ends a call under way (dqlite-demo gave up its start-up 0.4 s after one), and a
 * program that retries a few times before it gives up takes seconds more.
 */
const CONNECTION_CUT_EXIT_GRACE_MS = 5_000;

/** The connection cut an exit came just after (`NetworkBackend.connectionCuts`), if any. */
export function connectionCutBefore(network: NetworkBackend, exit: NodeExit): InducedCause | undefined {
  const cuts = network.connectionCuts?.(exit.node) ?? [];
  const cut = cuts.findLast((t) => t <= exit.ts && exit.ts - t <= CONNECTION_CUT_EXIT_GRACE_MS * NS_PER_MS);
  if (cut === undefined) return undefined;
  return {
    cause: `${((exit.ts - cut) / NS_PER_MS / 1000).toFixed(1)} s after the harness reset its connections (a delay emulated without netem: connections are redirected through a proxy)`,
    by: 'connection-cut',
  };
}

/**
 * Runs each checker in turn, adding what it found to `findings` and its verdict (with the client ops
 * it was given and its time) to `verdicts`; returns what each found.
 */
async function runCheckers(
  live: LiveRun,
  scheduled: ScheduleFaults,
  deaths: readonly DeathWhileWritesRefused[],
  ops: readonly Op[],
  events: readonly Event[],
  findings: Finding[],
  verdicts: CheckerVerdict[],
): Promise<Record<string, string[]>> {
  const { plan, store } = live;
  const { system, durability } = plan;
  const checks: Record<string, string[]> = {};
  const clientOps = ops.filter((op) => op.process !== 'nemesis').length;
  for (const checker of live.checkers) {
    const t0 = performance.now();
    const found = await checker.check({
      schedule: scheduled.schedule,
      ops,
      faults: scheduled.faults,
      ...(deaths.length > 0 ? { deathsWhileWritesRefused: deaths } : {}),
      events,
      runDir: store.dir,
      system,
      nodeCount: plan.nodes.length,
      ...(durability !== undefined ? { durability } : {}),
      ...(system.failoverLoss !== undefined ? { leaderChanges: leaderChanges(live, scheduled, events) } : {}),
    });
    const ms = Math.round(performance.now() - t0);
    checks[checker.name] = found.map((f) => `${f.kind}/${f.name}`);
    verdicts.push({ ...verdictOf(checker.name, found), ops: clientOps, ms });
    findings.push(...found);
  }
  return checks;
}
