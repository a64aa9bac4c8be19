import type { RunConfig } from '../config.js';

/** The abstraction whose states the policy learns on: the artifact's for `mallory`, ours otherwise. */
export function policyAbstraction(config: RunConfig): string {
  return config.policy === 'mallory' ? 'artifact' : 'causal';
}
