import { hash32 } from './_internals/hash.js';

/**
 * MinHash signatures (Broder 1997) for estimating the Jaccard similarity of feature sets, with the
 * artifact's 100 hash functions built by double hashing (h1 + i·h2) from two seeded base hashes.
 *
 * Usage: `const mh = new MinHash(); MinHash.similarity(mh.signature(a), mh.signature(b))`.
 */
export const DEFAULT_NUM_HASHES = 100;

const SEED_1 = 0x1b873593;
const SEED_2 = 0xcc9e2d51;
const EMPTY_SLOT = 0xffffffff;

export class MinHash {
  constructor(readonly numHashes = DEFAULT_NUM_HASHES) {
    if (!Number.isInteger(numHashes) || numHashes < 1) {
      throw new RangeError(`MinHash needs a positive integer number of hashes, got ${numHashes}`);
    }
  }

  signature(features: Iterable<string>): Uint32Array {
    const sig = new Uint32Array(this.numHashes).fill(EMPTY_SLOT);
    for (const f of features) {
      const h1 = hash32(f, SEED_1);
      const h2 = hash32(f, SEED_2) | 1;
      for (let i = 0; i < this.numHashes; i++) {
        const v = (h1 + Math.imul(i, h2)) >>> 0;
        if (v < sig[i]) sig[i] = v;
      }
    }
    return sig;
  }

  /** Share of equal slots: an unbiased estimate of the Jaccard similarity. */
  static similarity(a: Uint32Array, b: Uint32Array): number {
    if (a.length !== b.length) {
      throw new RangeError(`MinHash signatures differ in length (${a.length} vs ${b.length})`);
    }
    let equal = 0;
    for (let i = 0; i < a.length; i++) if (a[i] === b[i]) equal++;
    return equal / a.length;
  }
}
