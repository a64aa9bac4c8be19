import { resolve } from 'node:path';

import type { ResourceRegistry } from '../../cluster/resources.js';
import { type RunPlace, RunStore } from '../../store/run-store.js';
import type { RunConfig } from '../config.js';
import type { RunPlan } from '../create-run.js';

/**
 * Creates the run's directory and store under `--store`, the registry told where it is; a store
 * that cannot be created releases the registry before the error goes on. `place` names the
 * directory and gives its stamps' time (a simulated run's: its seed's, in virtual time).
 */
export function openStore(
  plan: RunPlan,
  config: RunConfig,
  runId: string,
  registry: ResourceRegistry,
  place: RunPlace = {},
): RunStore {
  const { definition, source, seed, settings, durability } = plan;
  try {
    return RunStore.create(
      resolve(config.store),
      {
        id: runId,
        system: definition.name,
        seed,
        policy: plan.fixedSchedule ? 'schedule' : config.policy,
        // The settings with their defaults, and the contract checked (the system's when not stated).
        config: {
          ...config,
          system: source,
          workload: plan.workload.source,
          seed,
          nodes: plan.nodes.length,
          settings,
          ...(durability !== undefined ? { durability: durability.level } : {}),
        },
      },
      (dir) => {
        registry.setRunDir(dir);
      },
      place,
    );
  } catch (e) {
    registry.releaseAll();
    throw e;
  }
}
