import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { Rng } from '../../src/core/random.js';
import { partitionLinks, shapesFor } from '../../src/nemesis/partition.js';
import { majoritySize, resolveTarget } from '../../src/nemesis/targets.js';

const nodesOf = (n: number): string[] => Array.from({ length: n }, (_, i) => `n${i + 1}`);

/** Connected components when every cut link is removed (undirected, since cuts are symmetric here). */
function sees(nodes: string[], links: readonly (readonly [string, string])[]): Map<string, Set<string>> {
  const cut = new Set(links.map(([a, b]) => `${a}>${b}`));
  return new Map(nodes.map((a) => [a, new Set(nodes.filter((b) => a === b || !cut.has(`${a}>${b}`)))]));
}

describe('partitionLinks', () => {
  it('halves: two sides that cannot talk, sizes ⌊n/2⌋ and the rest', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 9 }), fc.nat(), (n, seed) => {
        const nodes = nodesOf(n);
        const view = sees(nodes, partitionLinks('halves', nodes, new Rng(seed)));
        const sizes = [...new Set([...view.values()].map((s) => [...s].sort().join()))].map(
          (g) => g.split(',').length,
        );
        expect(sizes.sort()).toEqual([Math.floor(n / 2), n - Math.floor(n / 2)].sort());
      }),
    );
  });

  it('isolate: one node alone, the rest together; a chosen node is the isolated one', () => {
    const nodes = nodesOf(5);
    const view = sees(nodes, partitionLinks('isolate', nodes, new Rng(1), 'n3'));
    expect([...view.get('n3')!]).toEqual(['n3']);
    expect(view.get('n1')!.size).toBe(4);
  });

  it('bridge: one node sees everyone, the others only their half', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 9 }), fc.nat(), (n, seed) => {
        const nodes = nodesOf(n);
        const view = sees(nodes, partitionLinks('bridge', nodes, new Rng(seed)));
        const bridges = nodes.filter((x) => view.get(x)!.size === n);
        expect(bridges).toHaveLength(1);
        for (const x of nodes) if (x !== bridges[0]) expect(view.get(x)!.size).toBeLessThan(n);
      }),
    );
  });

  it('majorities-ring: every node sees a majority, and no two see the same set', () => {
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 9 }), fc.nat(), (n, seed) => {
        const nodes = nodesOf(n);
        const view = sees(nodes, partitionLinks('majorities-ring', nodes, new Rng(seed)));
        for (const s of view.values()) expect(s.size).toBeGreaterThanOrEqual(majoritySize(n));
        const distinct = new Set([...view.values()].map((s) => [...s].sort().join()));
        expect(distinct.size).toBe(n);
      }),
    );
  });

  it('offers the ring only where it cuts something', () => {
    expect(shapesFor(3)).not.toContain('majorities-ring');
    expect(shapesFor(5)).toContain('majorities-ring');
  });
});

describe('resolveTarget', () => {
  const nodes = nodesOf(5);
  it('sizes targets the way Jepsen does', () => {
    const rng = new Rng(9);
    expect(resolveTarget('one', nodes, rng, undefined)).toHaveLength(1);
    expect(resolveTarget('minority', nodes, rng, undefined)).toHaveLength(2);
    expect(resolveTarget('majority', nodes, rng, undefined)).toHaveLength(3);
    expect(resolveTarget('all', nodes, rng, undefined)).toEqual(nodes);
  });
  it('targets the leader only when it is known and among the candidates', () => {
    const rng = new Rng(9);
    expect(resolveTarget('leader', nodes, rng, 'n4')).toEqual(['n4']);
    expect(resolveTarget('leader', nodes, rng, undefined)).toEqual([]);
    expect(resolveTarget('leader', ['n1', 'n2'], rng, 'n4')).toEqual([]);
  });
  it('keeps explicit nodes that are candidates', () => {
    expect(resolveTarget(['n2', 'n9'], nodes, new Rng(1), undefined)).toEqual(['n2']);
  });
});
