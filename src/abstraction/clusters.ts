import { hashFeatures } from './_internals/hash.js';
import { DEFAULT_NUM_HASHES, MinHash } from './minhash.js';

/**
 * Similarity clustering of states as the artifact does it: a feature set's exact id is the hash of
 * its sorted features; a set whose id was seen keeps it; otherwise its MinHash signature is compared
 * with each cluster representative in order of creation, and the first with similarity strictly
 * above `threshold` gives the state its id. Failing that, the set founds a new cluster. Empty sets
 * are not clustered. `threshold: 1` turns clustering off.
 */
export interface ClusterOptions {
  /** Similarity above which a state joins a cluster (the artifact's example setting: 0.7). */
  readonly threshold?: number;
  readonly numHashes?: number;
}

export const DEFAULT_SIMILARITY_THRESHOLD = 0.7;

export class StateClusters {
  readonly threshold: number;
  private readonly minHash: MinHash;
  private readonly representatives: { readonly id: string; readonly signature: Uint32Array }[] = [];
  private readonly known = new Map<string, string>();

  constructor(options: ClusterOptions = {}) {
    this.threshold = options.threshold ?? DEFAULT_SIMILARITY_THRESHOLD;
    if (!(this.threshold >= 0 && this.threshold <= 1)) {
      throw new RangeError(`similarity threshold should be in [0, 1], got ${this.threshold}`);
    }
    this.minHash = new MinHash(options.numHashes ?? DEFAULT_NUM_HASHES);
  }

  /** Number of clusters founded so far. */
  get size(): number {
    return this.representatives.length;
  }

  /** The state id of a sorted, duplicate-free feature list. */
  assign(sorted: readonly string[]): string {
    const raw = hashFeatures(sorted);
    const known = this.known.get(raw);
    if (known !== undefined) return known;
    if (sorted.length === 0) return raw;
    let id = raw;
    if (this.threshold < 1) {
      const sig = this.minHash.signature(sorted);
      const match = this.representatives.find((r) => MinHash.similarity(sig, r.signature) > this.threshold);
      if (match) id = match.id;
      else this.representatives.push({ id: raw, signature: sig });
    }
    this.known.set(raw, id);
    return id;
  }
}
