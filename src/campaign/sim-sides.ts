import { loadSystem } from '../systems/load-system.js';
import type { RunConfig } from './config.js';
import { refuseSim } from './_internals/sim-parts.js';

/**
 * What the simulator cannot run of a comparison (`compare --sim`, `plan --sim`), refused in one
 * line before any campaign or plan exists: what `run --sim` refuses. Sides that share through an
 * exchange (`--exchange`, a side's `+exchange`) run there too: what they import depends on how far
 * the others have got, so such a campaign is not reproducible from its seed alone, but each of its
 * findings replays exactly (a replay runs the bug's schedule, not the policy).
 */
export async function refuseSimSides(base: RunConfig): Promise<void> {
  if (base.sim === undefined) return;
  const { definition } = await loadSystem(base.system);
  refuseSim(base, definition.name);
}
