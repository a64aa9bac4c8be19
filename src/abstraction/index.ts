import type { Abstraction } from './abstraction.js';
import { ArtifactAbstraction } from './artifact.js';
import { CausalAbstraction } from './causal.js';
import type { ClusterOptions } from './clusters.js';

export const ABSTRACTION_NAMES = ['artifact', 'causal'] as const;
export type AbstractionName = (typeof ABSTRACTION_NAMES)[number];

/** `artifact` (the Mallory artifact's) or `causal` (ours, the default). */
export function createAbstraction(
  name: AbstractionName = 'causal',
  options: ClusterOptions = {},
): Abstraction {
  switch (name) {
    case 'artifact':
      return new ArtifactAbstraction(options);
    case 'causal':
      return new CausalAbstraction(options);
  }
}
