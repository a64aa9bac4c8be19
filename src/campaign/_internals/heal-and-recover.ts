import type { ReadyAttempt } from '../../cluster/node-system.js';
import type { Op } from '../../core/op.js';
import type { HealJournal } from '../../nemesis/nemesis.js';
import type { History } from '../../workload/history.js';
import type { LiveRun } from './live-run.js';
import { recoveryTimeoutMs } from '../recovery-timeout.js';

/** How the cluster came back after a schedule's faults were healed. */
export interface Recovery {
  /** What healing could not undo, as the nemesis says it. */
  readonly resetErrors: readonly string[];
  /** Whether the system served again within the recovery timeout. */
  readonly recovered: boolean;
  /** How long it took to serve again; null when it did not within the timeout. */
  readonly recoveryMs: number | null;
  /**
   * When it served again only after the timeout, within the grace after it (half the timeout): ms
   * from the heal; null when it served in time or not at all. Tells late from never.
   */
  readonly lateMs: number | null;
  /** The recovery timeout it was held to (ms). */
  readonly timeoutMs: number;
  /** Every poll of the system's `ready` from the heal on, with what each checked. */
  readonly attempts: readonly ReadyAttempt[];
}

/** Whether the system serves now, in time or late: final reads can run, no hard reset is needed. */
export function serving(recovery: Recovery): boolean {
  return recovery.recovered || recovery.lateMs !== null;
}

/**
 * The reset in the history, as Jepsen's final generator writes it: each family's undo as a nemesis
 * op, `info` before and after (`start` with the nodes restarted, `stop-partition`, `resume`, …),
 * the errors it met on the second.
 */
export function historyJournal(history: History): HealJournal {
  return (phase, op, errors = []) => {
    history.record({
      type: 'info',
      process: 'nemesis',
      f: op.f,
      value: op.value,
      ...(phase === 'done' && errors.length > 0 ? { error: errors.join('; ') } : {}),
    });
  };
}

/**
 * Heals every fault and waits for the system to serve again: up to the recovery timeout, then (to
 * tell a late recovery from none) up to half as long again. The reset's nemesis ops join the
 * schedule's `ops` (checkers leave nemesis ops out; check.html ends the fault windows there).
 */
export async function healAndRecover(live: LiveRun, ops: Op[]): Promise<Recovery> {
  const { config, signal, state, parts, history, clock } = live;
  state.phase = 'resetting';
  const resetErrors = await parts.nemesis.healAll(historyJournal(history));
  const timeoutMs = recoveryTimeoutMs(config, live.plan.system);
  const recoveryStart = clock.nowMs();
  const attempts: ReadyAttempt[] = [];
  const recovered = await parts.cluster.waitReady(timeoutMs, signal, attempts);
  const recoveryMs = recovered ? clock.nowMs() - recoveryStart : null;
  let lateMs: number | null = null;
  if (!recovered && !signal.aborted) {
    const more: ReadyAttempt[] = [];
    const graceStart = clock.nowMs() - recoveryStart;
    const late = await parts.cluster.waitReady(timeoutMs / 2, signal, more);
    attempts.push(...more.map((a) => ({ ...a, atMs: a.atMs + graceStart })));
    if (late) lateMs = clock.nowMs() - recoveryStart;
  }
  ops.push(...history.takeSegment());
  state.phase = 'checking';
  return { resetErrors, recovered, recoveryMs, lateMs, timeoutMs, attempts };
}
