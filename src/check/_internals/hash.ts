/** Murmur3's 32-bit finaliser: a cheap, well-mixed hash of an int. */
export function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** FNV-1a over UTF-16 code units, finalised. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  }
  return mix32(h);
}

const FLOAT_VIEW = new Float64Array(1);
const INT_VIEW = new Int32Array(FLOAT_VIEW.buffer);

export function hashNumber(n: number): number {
  if (Number.isInteger(n) && n >= -0x80000000 && n <= 0x7fffffff) return mix32(n ^ 0x5bd1e995);
  FLOAT_VIEW[0] = n;
  return mix32(INT_VIEW[0] ^ mix32(INT_VIEW[1]));
}
