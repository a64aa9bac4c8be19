import type { SimulatedBug } from '../bug.js';
import type { RunConfig } from '../config.js';
import type { RunPlan } from '../create-run.js';

/** Where a simulated run runs (its world's seed, disks' contract, cuts' semantics); undefined for a real run. */
export function simulatedOf(plan: RunPlan, config: RunConfig): SimulatedBug | undefined {
  return plan.placement.kind === 'sim'
    ? {
        seed: plan.seed,
        contract: plan.placement.contract,
        partitions: config.network === 'netns' ? 'netns' : 'proxy',
      }
    : undefined;
}
