import { type Clock, realClock } from '../core/clock.js';
import { type Op, pairOps } from '../core/op.js';

/**
 * The recovery contract: once every fault is healed and the system serves again, it must also get
 * back to what it did before any fault — within `withinMs`, a measurement window of `windowMs`
 * must reach `throughputRatio` of the warm-up's completed ops per second, with a median latency at
 * most `latencyRatio` times the warm-up's.
 */
export interface RecoveryContract {
  readonly throughputRatio: number;
  readonly latencyRatio: number;
  readonly withinMs: number;
  readonly windowMs: number;
}

export const DEFAULT_RECOVERY_CONTRACT: RecoveryContract = {
  throughputRatio: 0.8,
  latencyRatio: 3,
  withinMs: 20_000,
  windowMs: 2_000,
};

/** What a window of client ops did: completed (`ok`) ops per second and their median latency. */
export interface PerfSample {
  /** ms after the measurement began (the end of this window). */
  readonly atMs: number;
  readonly okPerSec: number;
  /** Median latency of the `ok` ops, ms; null when none completed. */
  readonly p50Ms: number | null;
  readonly ok: number;
  readonly failed: number;
  readonly unknown: number;
}

const NS_PER_MS = 1e6;

/** Measures a window of `windowMs` from its client ops (invocations paired by process). */
export function measure(ops: readonly Op[], windowMs: number, atMs: number): PerfSample {
  const latencies: number[] = [];
  let failed = 0;
  let unknown = 0;
  for (const { invoke, completion } of pairOps(ops)) {
    if (completion?.type === 'ok') latencies.push((completion.time - invoke.time) / NS_PER_MS);
    else if (completion?.type === 'fail') failed++;
    else if (completion?.type === 'info') unknown++;
  }
  latencies.sort((a, b) => a - b);
  return {
    atMs,
    okPerSec: (latencies.length * 1000) / windowMs,
    p50Ms: latencies.length === 0 ? null : latencies[Math.floor((latencies.length - 1) / 2)],
    ok: latencies.length,
    failed,
    unknown,
  };
}

/** Whether a window meets the contract against the warm-up's sample. */
export function meets(sample: PerfSample, baseline: PerfSample, contract: RecoveryContract): boolean {
  if (sample.okPerSec < contract.throughputRatio * baseline.okPerSec) return false;
  // A warm-up that completed nothing gives no latency to compare with.
  if (baseline.p50Ms === null) return true;
  return sample.p50Ms !== null && sample.p50Ms <= contract.latencyRatio * Math.max(baseline.p50Ms, 1);
}

export interface RecoveryVerdict {
  readonly met: boolean;
  /** When the first window that met the contract ended, ms after the measurement began. */
  readonly metAtMs: number | null;
  readonly baseline: PerfSample;
  readonly samples: readonly PerfSample[];
}

/**
 * Runs measurement windows (`window()` runs the workload for `windowMs` and returns its ops) until
 * one meets the contract or `withinMs` has passed.
 */
export async function checkRecoveryContract(
  window: () => Promise<readonly Op[]>,
  baseline: PerfSample,
  contract: RecoveryContract,
  signal: AbortSignal,
  clock: Clock = realClock,
): Promise<RecoveryVerdict> {
  const samples: PerfSample[] = [];
  const start = clock.nowMs();
  while (!signal.aborted) {
    const ops = await window();
    const sample = measure(ops, contract.windowMs, clock.nowMs() - start);
    samples.push(sample);
    if (meets(sample, baseline, contract)) return { met: true, metAtMs: sample.atMs, baseline, samples };
    if (clock.nowMs() - start >= contract.withinMs) break;
  }
  return { met: false, metAtMs: null, baseline, samples };
}

function show(sample: PerfSample): string {
  return `${sample.okPerSec.toFixed(1)} ok/s, p50 ${sample.p50Ms === null ? '-' : `${sample.p50Ms.toFixed(1)} ms`}`;
}

/** The finding's message for a contract not met. */
export function describeRecoveryVerdict(verdict: RecoveryVerdict, contract: RecoveryContract): string {
  const last = verdict.samples[verdict.samples.length - 1];
  return (
    `the system served again but did not get back to its warm-up performance within ${contract.withinMs / 1000} s ` +
    `(needed ≥ ${Math.round(contract.throughputRatio * 100)}% of ${show(verdict.baseline)} and p50 ≤ ${contract.latencyRatio}×): ` +
    `last window ${last === undefined ? 'none' : show(last)}; ${verdict.samples.length} windows of ${contract.windowMs / 1000} s`
  );
}
