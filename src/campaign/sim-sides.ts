import { UsageError } from '../core/errors.js';
import { loadSystem } from '../systems/load-system.js';
import type { CompareArm } from './compare.js';
import type { RunConfig } from './config.js';
import { refuseSim } from './_internals/sim-parts.js';

/**
 * What the simulator cannot run of a comparison (`compare --sim`, `plan --sim`), refused in one
 * line before any campaign or plan exists: what `run --sim` refuses, and sharing through an
 * exchange (`--exchange`, a side's `+exchange`).
 */
export async function refuseSimSides(
  base: RunConfig,
  arms: readonly CompareArm[],
  options: { readonly exchange: boolean },
): Promise<void> {
  if (base.sim === undefined) return;
  const { definition } = await loadSystem(base.system);
  refuseSim(base, definition.name);
  const shared = arms.find((a) => a.exchange);
  if (shared !== undefined || options.exchange) {
    throw new UsageError(
      'bad-flag',
      `--sim: sharing what campaigns learn is not done in the simulator: drop ${shared !== undefined ? `+exchange from ${shared.name}` : '--exchange'}`,
    );
  }
}
