import { AdaptivePolicy, type AdaptiveOptions } from './adaptive.js';
import { CorpusPolicy, type CorpusOptions } from './corpus.js';
import { MalloryPolicy, type MalloryOptions } from './mallory.js';
import type { Policy } from './policy.js';
import { RandomPolicy } from './random.js';
import { SwarmPolicy } from './swarm.js';
import { TriggeredPolicy, type TriggeredOptions } from './triggered.js';

export const POLICY_NAMES = ['random', 'mallory', 'adaptive', 'triggered', 'corpus', 'swarm'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export interface PolicyOptions {
  readonly mallory?: MalloryOptions;
  readonly adaptive?: AdaptiveOptions;
  readonly triggered?: TriggeredOptions;
  readonly corpus?: CorpusOptions;
}

/**
 * `random` (Jepsen's baseline), `mallory` (the artifact's Q-learning), `adaptive` (ours) or
 * `triggered` (`adaptive` plus a triggered action armed each step) or `corpus` (`triggered` plus a
 * corpus of fault sequences that reached new states, replayed and mutated) or `swarm` (`random`
 * within a per-schedule random subset of the fault kinds and values: swarm testing).
 * Throws for another name (the CLI validates names first, with `isPolicyName`).
 */
export function createPolicy(name: string, options: PolicyOptions = {}): Policy {
  if (!isPolicyName(name)) {
    throw new Error(`policy ${name} is not available: use one of ${POLICY_NAMES.join(', ')}`);
  }
  switch (name) {
    case 'random':
      return new RandomPolicy();
    case 'mallory':
      return new MalloryPolicy(options.mallory);
    case 'adaptive':
      return new AdaptivePolicy(options.adaptive);
    case 'triggered':
      return new TriggeredPolicy(options.triggered);
    case 'corpus':
      return new CorpusPolicy(options.corpus);
    case 'swarm':
      return new SwarmPolicy();
  }
}

export function isPolicyName(name: string): name is PolicyName {
  return (POLICY_NAMES as readonly string[]).includes(name);
}
