import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseArm } from '../../../src/campaign/compare.js';
import { type RunConfig, RunConfigSchema } from '../../../src/campaign/config.js';
import { UsageError } from '../../../src/core/errors.js';
import {
  buildPlan,
  defaultPlanFile,
  type Plan,
  type PlanRequest,
  writePlan,
} from '../../../src/fleet/plan.js';

/** A fresh directory under the system's temp dir; the caller removes it. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'mallory-fleet-'));
}

/** A campaign configuration as the CLI would give it, on `store`. */
export function baseConfig(store: string, fields: Record<string, unknown> = {}): RunConfig {
  return RunConfigSchema.parse({ system: 'kvraft', store, timeMs: 1000, ...fields });
}

/** The request for a plan of `arms` (as `compare --policies` names them) × `seeds` from seed 10. */
export function planRequest(
  store: string,
  options: { arms?: readonly string[]; seeds?: number; id?: string; eachBug?: readonly string[] } = {},
): PlanRequest {
  return {
    base: baseConfig(store),
    arms: (options.arms ?? ['adaptive', 'random']).map(parseArm),
    seeds: options.seeds ?? 2,
    seed: 10,
    ...(options.id !== undefined ? { id: options.id } : {}),
    ...(options.eachBug !== undefined ? { eachBug: options.eachBug } : {}),
  };
}

/** A plan written where `mallory plan` writes it by default: `<store>/plans/<id>/plan.json`. */
export function writeStorePlan(store: string, options: Parameters<typeof planRequest>[1] = {}): Plan {
  const data = buildPlan(planRequest(store, { id: 'test-plan', ...options }), store);
  return writePlan(data, defaultPlanFile(store, data.id));
}

/** The `UsageError` that `act` throws (fails the test when it throws nothing or something else). */
export function usageError(act: () => unknown): UsageError {
  try {
    act();
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error('expected a UsageError, but nothing was thrown');
}
