import { mix32 } from './hash.js';

/**
 * What the search has linearized so far, in a form whose key stays short whatever the length of
 * the history.
 *
 * Required ops (completed `ok`) are a bitset with an incremental (Zobrist) hash; in a search they
 * fill up from the bottom, so that region is keyed by its first word that is not full up to its
 * last non-zero word. `info` ops come in groups of interchangeable ops (equal inputs) taken in
 * invoke order, so the linearized ones of a group are always its first few: the info region holds
 * one count per group, keyed by its non-zero cells. A set with fewer info ops linearized, the
 * required ones being equal, has every count lower or equal.
 */
export class LinearizedSet {
  /** Required bits in words [0, requiredWords), then one info count per group. */
  readonly words: Int32Array;
  readonly requiredWords: number;
  /** First word of the required region that is not all ones. */
  lo = 0;
  /** One past the last non-zero word of the required region (at least `lo`). */
  hi = 0;
  /** Non-zero info counts: cells [infoLo, infoHi). */
  infoLo: number;
  infoHi: number;
  /** Zobrist hash of the required bits only (info counts are compared by dominance, not hashed). */
  requiredHash = 0;

  constructor(requiredBits: number, infoGroups: number) {
    this.requiredWords = (requiredBits + 31) >>> 5;
    this.words = new Int32Array(this.requiredWords + infoGroups);
    this.infoLo = this.requiredWords;
    this.infoHi = this.requiredWords;
  }

  add(bit: number): void {
    const w = bit >>> 5;
    const words = this.words;
    words[w] |= 1 << (bit & 31);
    this.requiredHash ^= mix32(bit + 0x3c6ef372);
    if (w >= this.hi) this.hi = w + 1;
    let lo = this.lo;
    while (lo < this.requiredWords && words[lo] === -1) lo++;
    this.lo = lo;
    if (this.hi < lo) this.hi = lo;
  }

  remove(bit: number): void {
    const w = bit >>> 5;
    const words = this.words;
    words[w] &= ~(1 << (bit & 31));
    this.requiredHash ^= mix32(bit + 0x3c6ef372);
    if (w < this.lo) this.lo = w;
    let hi = this.hi;
    while (hi > this.lo && words[hi - 1] === 0) hi--;
    this.hi = hi;
  }

  addInfo(group: number): void {
    const cell = this.requiredWords + group;
    this.words[cell]++;
    if (this.infoLo === this.infoHi) {
      this.infoLo = cell;
      this.infoHi = cell + 1;
    } else {
      if (cell < this.infoLo) this.infoLo = cell;
      if (cell >= this.infoHi) this.infoHi = cell + 1;
    }
  }

  removeInfo(group: number): void {
    const cell = this.requiredWords + group;
    const words = this.words;
    if (--words[cell] !== 0) return;
    let lo = this.infoLo;
    let hi = this.infoHi;
    while (lo < hi && words[lo] === 0) lo++;
    while (hi > lo && words[hi - 1] === 0) hi--;
    if (lo === hi) lo = hi = this.requiredWords;
    this.infoLo = lo;
    this.infoHi = hi;
  }
}
