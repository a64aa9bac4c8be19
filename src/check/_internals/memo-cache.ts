import { mix32 } from './hash.js';
import type { LinearizedSet } from './linearized-set.js';
import { MemoryLimitReached } from '../../core/memory-limit.js';

const HEADER_INTS = 5;
const INFO_HEADER_INTS = 3;
/**
 * Small: a search of a 60–70-op history stores 15 to 200 configurations (the Jepsen etcd
 * histories), and allocating and zeroing larger tables was a good share of its time.
 */
const INITIAL_SLOTS = 1 << 7;
const INITIAL_POOL_INTS = 1 << 9;
const INITIAL_INFO_POOL_INTS = 1 << 8;
/**
 * Tables this small are not weighed against the resident set at each growth (reading it is a
 * system call that cost a small search more than its work): they are far below the reserve the
 * bound keeps, and the search reads the resident set on its own every few thousand steps.
 */
const RSS_UNCHECKED_BYTES = 256 * 1024;
/** A finished cache's arrays up to this size are kept for the next search (see `release`). */
const SPARE_MAX_BYTES = 64 * 1024;

/** The arrays a released cache left for the next one on this thread. */
let spare:
  | {
      readonly slots: Int32Array<ArrayBuffer>;
      readonly pool: Int32Array<ArrayBuffer>;
      readonly infoPool: Int32Array<ArrayBuffer>;
    }
  | undefined;
const NONE = -1;
const RSS_RESERVE_SHARE = 0.03;
/** How full the slot table may get when there is no room to double it (it doubles at half full). */
const MAX_LOAD_WITHOUT_ROOM = 0.85;
const RSS_RESERVE_MAX_BYTES = 64 * 1024 ** 2;

/**
 * The configurations (linearized set, model state) the search has reached, with dominance over
 * `info` ops: (R, I, s) need not be explored when (R, I', s) was, for I' ⊆ I — every way to finish
 * from the former finishes from the latter too (leave the extra info ops out; info ops constrain no
 * one). So the table is keyed by (required set, state) and each key keeps the minimal info sets
 * seen, as per-group counts (I' ⊆ I when every count of I' is at most that of I).
 *
 * Keys live in `pool` as `[hash, stateId, lo, hiLen, infoHead, ...required words]`; info sets in
 * `infoPool` as linked nodes `[next, infoLo, infoLen, ...counts]`.
 *
 * The three arrays are all it holds, so its size is known: a growth that would take them past
 * `maxBytes` (the old array and the new one, while it is copied), or the process past `rssBytes`,
 * throws `MemoryLimitReached` instead. A pool grows by doubling, or by less when only that fits.
 */
export class MemoCache {
  private slots: Int32Array<ArrayBuffer>;
  private pool: Int32Array<ArrayBuffer>;
  private infoPool: Int32Array<ArrayBuffer>;
  private used = 0;
  private infoUsed = 0;
  private count = 0;

  /**
   * `maxBytes` bounds its arrays; `rssBytes` the process's resident set at each growth (the arrays
   * a growth replaced stay resident until the collector frees them, and the bound counts them).
   */
  constructor(
    private readonly maxBytes = Infinity,
    private readonly rssBytes = Infinity,
  ) {
    const kept = spare;
    spare = undefined;
    if (kept === undefined) {
      this.slots = new Int32Array(INITIAL_SLOTS);
      this.pool = new Int32Array(INITIAL_POOL_INTS);
      this.infoPool = new Int32Array(INITIAL_INFO_POOL_INTS);
    } else {
      // The pools are read only below `used`: only the slot table must start empty.
      this.slots = kept.slots.fill(0);
      this.pool = kept.pool;
      this.infoPool = kept.infoPool;
    }
  }

  /**
   * Hands its arrays, when small, to the next cache made on this thread; this one must not be used
   * after. Allocating them cost a small search (tens of ops) a good share of its time.
   */
  release(): void {
    if (this.bytes <= SPARE_MAX_BYTES)
      spare = { slots: this.slots, pool: this.pool, infoPool: this.infoPool };
    this.slots = this.pool = this.infoPool = new Int32Array(0);
    this.used = this.infoUsed = this.count = 0;
  }

  /** Bytes its arrays take. */
  get bytes(): number {
    return this.slots.byteLength + this.pool.byteLength + this.infoPool.byteLength;
  }

  /**
   * How many more bytes may be allocated now: under `maxBytes`, and under `rssBytes` less a reserve
   * for what the process allocates besides (its heap, the output at the end). `growthBytes`: what
   * the growth asked for would add.
   */
  private room(growthBytes: number): number {
    const own = this.maxBytes - this.bytes;
    if (this.rssBytes === Infinity || this.bytes + growthBytes <= RSS_UNCHECKED_BYTES) return own;
    const reserve = Math.min(RSS_RESERVE_MAX_BYTES, this.rssBytes * RSS_RESERVE_SHARE);
    return Math.min(own, this.rssBytes - reserve - process.memoryUsage.rss());
  }

  /** `pool` with room for `need` more ints after `used`: itself, or a larger copy. */
  private grown(pool: Int32Array<ArrayBuffer>, used: number, need: number): Int32Array<ArrayBuffer> {
    if (used + need <= pool.length) return pool;
    const fits = Math.floor(this.room(pool.byteLength) / 4);
    const length = Math.max(used + need, Math.min(pool.length * 2, fits));
    if (length > fits) throw new MemoryLimitReached();
    const bigger = new Int32Array(length);
    bigger.set(pool.subarray(0, used));
    return bigger;
  }

  /** Configurations stored (keys plus extra info sets). */
  get size(): number {
    return this.count;
  }

  /** Adds the configuration; false when it, or one that dominates it, was already there. */
  add(set: LinearizedSet, stateId: number): boolean {
    const hash = mix32(set.requiredHash ^ Math.imul(stateId + 1, 0x9e3779b1));
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    for (;;) {
      const at = this.slots[slot];
      if (at === 0) break;
      if (this.matches(at - 1, hash, set, stateId)) return this.addInfo(at - 1, set);
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
    if (pool[at + 2] !== set.lo || pool[at + 3] !== set.hi - set.lo) return false;
    const words = set.words;
    let p = at + HEADER_INTS;
    for (let w = set.lo; w < set.hi; w++) if (pool[p++] !== words[w]) return false;
    return true;
  }

  /** Records the info set under an existing key unless a subset of it is there already. */
  private addInfo(at: number, set: LinearizedSet): boolean {
    const info = this.infoPool;
    const words = set.words;
    let previous = NONE;
    let node = this.pool[at + 4];
    while (node !== NONE) {
      const lo = info[node + 1];
      const len = info[node + 2];
      let storedIsSubset = true;
      for (let i = 0; i < len; i++) {
        if (info[node + INFO_HEADER_INTS + i] > words[lo + i]) {
          storedIsSubset = false;
          break;
        }
      }
      if (storedIsSubset) return false;
      let storedIsSuperset = true;
      for (let w = set.infoLo; w < set.infoHi; w++) {
        const stored = w >= lo && w < lo + len ? info[node + INFO_HEADER_INTS + w - lo] : 0;
        if (words[w] > stored) {
          storedIsSuperset = false;
          break;
        }
      }
      const next = info[node];
      if (storedIsSuperset) {
        if (previous === NONE) this.pool[at + 4] = next;
        else info[previous] = next;
      } else {
        previous = node;
      }
      node = next;
    }
    this.pool[at + 4] = this.appendInfo(set, this.pool[at + 4]);
    this.count++;
    return true;
  }

  private appendInfo(set: LinearizedSet, next: number): number {
    const len = set.infoHi - set.infoLo;
    this.infoPool = this.grown(this.infoPool, this.infoUsed, INFO_HEADER_INTS + len);
    const node = this.infoUsed;
    const info = this.infoPool;
    info[node] = next;
    info[node + 1] = set.infoLo;
    info[node + 2] = len;
    const words = set.words;
    for (let w = set.infoLo, p = node + INFO_HEADER_INTS; w < set.infoHi; w++, p++) info[p] = words[w];
    this.infoUsed += INFO_HEADER_INTS + len;
    return node;
  }

  private append(hash: number, set: LinearizedSet, stateId: number): number {
    const hiLen = set.hi - set.lo;
    this.pool = this.grown(this.pool, this.used, HEADER_INTS + hiLen);
    const pool = this.pool;
    const at = this.used;
    pool[at] = hash;
    pool[at + 1] = stateId;
    pool[at + 2] = set.lo;
    pool[at + 3] = hiLen;
    const words = set.words;
    for (let w = set.lo, p = at + HEADER_INTS; w < set.hi; w++, p++) pool[p] = words[w];
    this.used += HEADER_INTS + hiLen;
    pool[at + 4] = this.appendInfo(set, NONE);
    return at;
  }

  private grow(): void {
    if (this.slots.byteLength * 2 > this.room(this.slots.byteLength * 2)) {
      // No room to double the table: it fills up further (probes get longer) until it is nearly full.
      if (this.count < this.slots.length * MAX_LOAD_WITHOUT_ROOM) return;
      throw new MemoryLimitReached();
    }
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
