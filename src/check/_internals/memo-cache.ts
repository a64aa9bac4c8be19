import { mix32 } from './hash.js';
import type { LinearizedSet } from './linearized-set.js';

const HEADER_INTS = 6;
const INITIAL_SLOTS = 1 << 10;
const INITIAL_POOL_INTS = 1 << 14;

/**
 * The configurations (linearized set, model state id) the search has already reached: an
 * open-addressing hash table over a pool of packed keys
 * `[hash, stateId, lo, hiLen, infoLo, infoLen, ...words]`.
 */
export class MemoCache {
  private slots = new Int32Array(INITIAL_SLOTS);
  private pool = new Int32Array(INITIAL_POOL_INTS);
  private used = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds the configuration; false when it was already there. */
  add(set: LinearizedSet, stateId: number): boolean {
    const hash = mix32(set.hash ^ Math.imul(stateId + 1, 0x9e3779b1));
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const at = this.slots[slot];
      if (at === 0) break;
      if (this.matches(at - 1, hash, set, stateId)) return false;
      slot = (slot + 1) & mask;
    }
    this.slots[slot] = this.append(hash, set, stateId) + 1;
    this.count++;
    if (this.count * 2 > this.slots.length) this.grow();
    return true;
  }

  private matches(at: number, hash: number, set: LinearizedSet, stateId: number): boolean {
    const pool = this.pool;
    if (pool[at] !== hash || pool[at + 1] !== stateId) return false;
    const hiLen = set.hi - set.lo;
    const infoLen = set.infoHi - set.infoLo;
    if (pool[at + 2] !== set.lo || pool[at + 3] !== hiLen) return false;
    if (pool[at + 4] !== set.infoLo || pool[at + 5] !== infoLen) return false;
    const words = set.words;
    let p = at + HEADER_INTS;
    for (let w = set.lo; w < set.hi; w++) if (pool[p++] !== words[w]) return false;
    for (let w = set.infoLo; w < set.infoHi; w++) if (pool[p++] !== words[w]) return false;
    return true;
  }

  private append(hash: number, set: LinearizedSet, stateId: number): number {
    const hiLen = set.hi - set.lo;
    const infoLen = set.infoHi - set.infoLo;
    const need = HEADER_INTS + hiLen + infoLen;
    if (this.used + need > this.pool.length) {
      const bigger = new Int32Array(Math.max(this.pool.length * 2, this.used + need));
      bigger.set(this.pool.subarray(0, this.used));
      this.pool = bigger;
    }
    const pool = this.pool;
    const at = this.used;
    pool[at] = hash;
    pool[at + 1] = stateId;
    pool[at + 2] = set.lo;
    pool[at + 3] = hiLen;
    pool[at + 4] = set.infoLo;
    pool[at + 5] = infoLen;
    pool.set(set.words.subarray(set.lo, set.hi), at + HEADER_INTS);
    pool.set(set.words.subarray(set.infoLo, set.infoHi), at + HEADER_INTS + hiLen);
    this.used += need;
    return at;
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (const entry of this.slots) {
      if (entry === 0) continue;
      let slot = this.pool[entry - 1] & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry;
    }
    this.slots = slots;
  }
}
