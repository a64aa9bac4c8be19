import type { RunConfig } from '../config.js';

/** The recovery contract's warm-up lasts this many measurement windows. */
const WARMUP_WINDOWS = 2;

/**
 * The healthy stretch before the first fault: `--warmup`, or the recovery contract's yardstick,
 * whichever is longer. A bug's schedule header keeps it so its replay warms up as the run did.
 */
export function effectiveWarmupMs(config: RunConfig): number {
  const contractMs = config.recoveryContract ? WARMUP_WINDOWS * config.recoveryContract.windowMs : 0;
  return Math.max(config.warmupMs, contractMs);
}
