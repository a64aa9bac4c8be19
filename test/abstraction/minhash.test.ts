import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { StateClusters } from '../../src/abstraction/clusters.js';
import { MinHash } from '../../src/abstraction/minhash.js';

describe('MinHash', () => {
  const mh = new MinHash();

  it('gives similarity 1 for identical sets, whatever the order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 30 }), (xs) => {
        expect(MinHash.similarity(mh.signature(xs), mh.signature([...xs].reverse()))).toBe(1);
      }),
    );
  });

  it('estimates the Jaccard similarity', () => {
    const a = Array.from({ length: 200 }, (_, i) => `f${i}`);
    const b = Array.from({ length: 200 }, (_, i) => `f${i + 100}`); // Jaccard 100/300
    expect(MinHash.similarity(mh.signature(a), mh.signature(b))).toBeGreaterThan(1 / 3 - 0.15);
    expect(MinHash.similarity(mh.signature(a), mh.signature(b))).toBeLessThan(1 / 3 + 0.15);
    const c = Array.from({ length: 50 }, (_, i) => `g${i}`);
    expect(MinHash.similarity(mh.signature(a), mh.signature(c))).toBeLessThan(0.1);
    expect(() => new MinHash(0)).toThrow(/positive/);
  });
});

describe('StateClusters', () => {
  const big = Array.from({ length: 40 }, (_, i) => `p${String(i).padStart(2, '0')}`);

  it('maps a near-duplicate set to the known cluster and a distant one to a new cluster', () => {
    const c = new StateClusters({ threshold: 0.7 });
    const first = c.assign(big);
    expect(c.assign(big)).toBe(first);
    expect(c.assign([...big.slice(1), 'zz'].sort())).toBe(first);
    const other = c.assign(['q1', 'q2', 'q3']);
    expect(other).not.toBe(first);
    expect(c.size).toBe(2);
  });

  it('does not cluster at threshold 1, nor empty sets', () => {
    const c = new StateClusters({ threshold: 1 });
    expect(c.assign(big)).not.toBe(c.assign([...big.slice(1), 'zz'].sort()));
    expect(c.assign([])).toBe(c.assign([]));
    expect(() => new StateClusters({ threshold: 1.5 })).toThrow(/threshold/);
  });
});
