import type { SystemAdapter } from '../systems/system.js';
import type { RunConfig } from './config.js';

/** How long a system may take to serve again after a reset, unless it or the run says otherwise. */
export const DEFAULT_RECOVERY_TIMEOUT_MS = 30_000;

/**
 * The recovery bound of a run: `--recovery-timeout` when given, else what the system declares it
 * needs (`SystemAdapter.recoveryTimeoutMs`), else {@link DEFAULT_RECOVERY_TIMEOUT_MS}.
 */
export function recoveryTimeoutMs(
  config: Pick<RunConfig, 'recoveryTimeoutMs'>,
  system: Pick<SystemAdapter, 'recoveryTimeoutMs'>,
): number {
  return config.recoveryTimeoutMs ?? system.recoveryTimeoutMs ?? DEFAULT_RECOVERY_TIMEOUT_MS;
}
