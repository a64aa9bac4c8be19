import { constants } from 'node:os';

import type { NodeExit } from '../cluster/cluster.js';
import { NS_PER_MS } from '../core/clock.js';

/** The signals that stop a run the way Ctrl-C does (a closed terminal, `kill`, `scancel`). */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * How long before the fuzzer saw the run's stop signal a node's exit may have come and still be put
 * down to it: a signal sent to every process of a job at once (Ctrl-C to a process group, Slurm's
 * `scancel`, a container stop) reaches the nodes too, and a node's exit may be handled first. It is
 * also how long an unexpected exit waits before it is judged, so a stop signal just behind it is seen.
 */
export const STOP_SIGNAL_SETTLE_MS = 500;

/** The reason a campaign's abort carries when a process signal stopped it. */
export class StopSignal {
  constructor(readonly signal: NodeJS.Signals) {}
}

/** The signal that stopped a campaign aborted by `signal`, if a process signal did. */
export function stopSignalOf(signal: AbortSignal): NodeJS.Signals | undefined {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof StopSignal ? reason.signal : undefined;
}

/**
 * Whether `exit` is how a process ends on a stop signal: killed by one, or exited with code 0 or
 * 128 + its number (a handler that shuts down cleanly, or a shell's or a JVM's way of saying it).
 * Any other code, or a fault's signal, is not: a crash at that moment stays a crash.
 */
export function endsLikeStop(exit: Pick<NodeExit, 'code' | 'signal'>): boolean {
  if (exit.signal !== null) return STOP_SIGNALS.includes(exit.signal);
  if (exit.code === 0) return true;
  return STOP_SIGNALS.some((s) => exit.code === SIGNAL_EXIT_BASE + constants.signals[s]);
}

/** The run's stop signal and when the fuzzer saw it (`monoNs`). */
export interface RunStop {
  readonly signal: NodeJS.Signals;
  readonly ts: number;
}

/**
 * The stop signal `exit` is put down to, if any: the run was stopped by `stop`, and the node ended as
 * a stop signal ends a process, after the fuzzer saw it or at most `STOP_SIGNAL_SETTLE_MS` before
 * (the signal reached the node first). An exit without a stop is never put down to one.
 */
export function exitStopSignal(
  stop: RunStop | undefined,
  exit: Pick<NodeExit, 'code' | 'signal' | 'ts'>,
): NodeJS.Signals | undefined {
  if (stop === undefined || exit.ts < stop.ts - STOP_SIGNAL_SETTLE_MS * NS_PER_MS) return undefined;
  return endsLikeStop(exit) ? stop.signal : undefined;
}

/** A process that ended on signal n reports 128 + n when it (or the shell that ran it) exits. */
const SIGNAL_EXIT_BASE = 128;
