import { basename } from 'node:path';

import type { Op } from '../../core/op.js';
import { measure, type PerfSample } from '../recovery-contract.js';
import { keyspace } from './keyspace.js';
import { effectiveWarmupMs } from './effective-warmup-ms.js';
import type { LiveRun } from './live-run.js';

/** What the warm-up leaves the schedules. */
export interface WarmUp {
  /** Its ops, checked with the first schedule's (which empties this). */
  readonly carried: Op[];
  /** The recovery contract's yardstick: the workload on the fault-free cluster. */
  readonly baseline: PerfSample | undefined;
}

/** The workload on the healthy cluster before the first fault, if the run warms up at all. */
export async function warmUp(live: LiveRun): Promise<WarmUp> {
  const { config, signal, parts, history, emit, clock } = live;
  const warmupMs = effectiveWarmupMs(config);
  if (warmupMs <= 0) return { carried: [], baseline: undefined };
  parts.workload.start(keyspace(live.plan, { warmupOf: basename(live.store.dir) }));
  await clock.sleep(warmupMs, signal);
  await parts.workload.stop();
  const carried = history.takeSegment();
  if (!config.recoveryContract) {
    const ok = carried.filter((op) => op.type === 'ok').length;
    emit('message', `  warm-up: ${ok} ok ops in ${(warmupMs / 1000).toFixed(1)} s before the first fault`);
    return { carried, baseline: undefined };
  }
  const baseline = measure(carried, warmupMs, warmupMs);
  emit(
    'message',
    `  warm-up: ${baseline.okPerSec.toFixed(1)} ok/s, p50 ${baseline.p50Ms === null ? '-' : `${baseline.p50Ms.toFixed(1)} ms`} (the recovery contract's yardstick)`,
  );
  return { carried, baseline };
}
