import { mix32 } from './hash.js';

/**
 * The set of ops linearized so far, as a bitset with an incremental (Zobrist) hash.
 *
 * Bits below `requiredBits` are ops that must be linearized; in a search they fill up from the
 * bottom, so that region is keyed by its first word that is not full up to its last non-zero word.
 * Bits from `requiredWords * 32` up are `info` ops, which may stay out forever, keyed by their
 * non-zero words. The key of a set is therefore short whatever the history's length.
 */
export class LinearizedSet {
  readonly words: Int32Array;
  readonly requiredWords: number;
  /** First word of the required region that is not all ones. */
  lo = 0;
  /** One past the last non-zero word of the required region (at least `lo`). */
  hi = 0;
  /** Non-zero words of the info region: [infoLo, infoHi). */
  infoLo: number;
  infoHi: number;
  /** Zobrist hash of the required bits only (info bits are compared by subset, not hashed). */
  requiredHash = 0;

  constructor(requiredBits: number, infoBits: number) {
    this.requiredWords = (requiredBits + 31) >>> 5;
    this.words = new Int32Array(this.requiredWords + ((infoBits + 31) >>> 5));
    this.infoLo = this.requiredWords;
    this.infoHi = this.requiredWords;
  }

  /** The bit of the `i`-th info op. */
  infoBit(i: number): number {
    return (this.requiredWords << 5) + i;
  }

  add(bit: number): void {
    const w = bit >>> 5;
    const words = this.words;
    words[w] |= 1 << (bit & 31);
    if (w < this.requiredWords) {
      this.requiredHash ^= mix32(bit + 0x3c6ef372);
      if (w >= this.hi) this.hi = w + 1;
      let lo = this.lo;
      while (lo < this.requiredWords && words[lo] === -1) lo++;
      this.lo = lo;
      if (this.hi < lo) this.hi = lo;
    } else if (this.infoLo === this.infoHi) {
      this.infoLo = w;
      this.infoHi = w + 1;
    } else {
      if (w < this.infoLo) this.infoLo = w;
      if (w >= this.infoHi) this.infoHi = w + 1;
    }
  }

  remove(bit: number): void {
    const w = bit >>> 5;
    const words = this.words;
    words[w] &= ~(1 << (bit & 31));
    if (w < this.requiredWords) {
      this.requiredHash ^= mix32(bit + 0x3c6ef372);
      if (w < this.lo) this.lo = w;
      let hi = this.hi;
      while (hi > this.lo && words[hi - 1] === 0) hi--;
      this.hi = hi;
    } else if (words[w] === 0) {
      let lo = this.infoLo;
      let hi = this.infoHi;
      while (lo < hi && words[lo] === 0) lo++;
      while (hi > lo && words[hi - 1] === 0) hi--;
      if (lo === hi) lo = hi = this.requiredWords;
      this.infoLo = lo;
      this.infoHi = hi;
    }
  }

  has(bit: number): boolean {
    return (this.words[bit >>> 5] & (1 << (bit & 31))) !== 0;
  }
}
