import type { Link } from '../cluster/net/backend.js';
import type { PartitionShape } from '../core/fault.js';
import type { Rng } from '../core/random.js';
import { majoritySize } from './targets.js';

/** Which nodes may not talk to which: every pair in the grudge is cut in both directions. */
export type Grudge = ReadonlyMap<string, ReadonlySet<string>>;

/** Links cut so that nodes in different groups cannot talk. */
export function groupsToLinks(groups: readonly (readonly string[])[]): Link[] {
  const links: Link[] = [];
  for (let i = 0; i < groups.length; i++) {
    for (let j = 0; j < groups.length; j++) {
      if (i === j) continue;
      for (const a of groups[i]) for (const b of groups[j]) links.push([a, b]);
    }
  }
  return links;
}

/** All directed links except those between nodes that `sees` says may talk. */
function linksExcept(nodes: readonly string[], sees: (a: string, b: string) => boolean): Link[] {
  const links: Link[] = [];
  for (const a of nodes) for (const b of nodes) if (a !== b && !sees(a, b)) links.push([a, b]);
  return links;
}

/** The shapes that make sense for `n` nodes (a ring of 3 or 4 cuts nothing useful). */
export function shapesFor(n: number): PartitionShape[] {
  const shapes: PartitionShape[] = ['halves', 'isolate'];
  if (n >= 3) shapes.push('bridge');
  if (n >= 5) shapes.push('majorities-ring');
  return shapes;
}

/**
 * The directed links a partition of this shape cuts: `halves` (random ⌊n/2⌋ vs the rest),
 * `isolate` (one node, or `isolated` when given, vs the rest), `bridge` (two halves that share one
 * node), `majorities-ring` (nodes on a ring each see a majority; no two see the same one).
 */
export function partitionLinks(
  shape: PartitionShape,
  nodes: readonly string[],
  rng: Rng,
  isolated?: string,
): Link[] {
  const order = rng.shuffle(nodes);
  const n = order.length;
  switch (shape) {
    case 'halves': {
      const k = Math.floor(n / 2);
      return groupsToLinks([order.slice(0, k), order.slice(k)]);
    }
    case 'isolate': {
      const one = isolated ?? order[0];
      return groupsToLinks([[one], nodes.filter((x) => x !== one)]);
    }
    case 'bridge': {
      const mid = Math.floor(n / 2);
      const left = new Set(order.slice(0, mid + 1));
      const right = new Set(order.slice(mid));
      return linksExcept(order, (a, b) => (left.has(a) && left.has(b)) || (right.has(a) && right.has(b)));
    }
    case 'majorities-ring': {
      const reach = Math.ceil((majoritySize(n) - 1) / 2);
      const pos = new Map(order.map((x, i) => [x, i]));
      return linksExcept(order, (a, b) => {
        const d = Math.abs(pos.get(a)! - pos.get(b)!);
        return Math.min(d, n - d) <= reach;
      });
    }
  }
}
