import type { Target } from '../core/fault.js';
import type { Rng } from '../core/random.js';

/** Jepsen's target sizes: a minority is ⌊n/2⌋ nodes, a majority ⌊n/2⌋ + 1. */
export function majoritySize(n: number): number {
  return Math.floor(n / 2) + 1;
}

/**
 * Resolves a target to concrete nodes among `nodes`. `leader` needs the system's current leader;
 * when it is unknown the target resolves to no node.
 */
export function resolveTarget(
  target: Target | readonly string[],
  nodes: readonly string[],
  rng: Rng,
  leader: string | undefined,
): string[] {
  if (Array.isArray(target)) return nodes.filter((n) => target.includes(n));
  if (nodes.length === 0) return [];
  const shuffled = rng.shuffle(nodes);
  switch (target) {
    case 'one':
      return shuffled.slice(0, 1);
    case 'minority':
      return shuffled.slice(0, Math.max(1, Math.floor(nodes.length / 2)));
    case 'majority':
      return shuffled.slice(0, Math.min(nodes.length, majoritySize(nodes.length)));
    case 'all':
      return [...nodes];
    case 'leader':
      return leader !== undefined && nodes.includes(leader) ? [leader] : [];
    default:
      throw new Error(`unknown target ${String(target)}`);
  }
}
