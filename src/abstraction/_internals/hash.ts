/** 32-bit string hash (FNV-1a over UTF-16 code units, then murmur3's finaliser), seeded. */
export function hash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const SEED_HI = 0x9e3779b9;
const SEED_LO = 0x7f4a7c15;

/** A 64-bit id (16 hex digits) of a sorted feature list. */
export function hashFeatures(sorted: readonly string[]): string {
  const text = sorted.join('\n');
  const hi = hash32(text, SEED_HI).toString(16).padStart(8, '0');
  const lo = hash32(text, SEED_LO).toString(16).padStart(8, '0');
  return hi + lo;
}
