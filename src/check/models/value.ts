import { ednText } from '../_internals/edn-text.js';
import { hashNumber, hashString } from '../_internals/hash.js';
import { exactInteger } from '../history/read-number.js';

/**
 * A register value in a form compared with `===`, one per value under EDN's equality: null,
 * booleans, numbers and strings as they are, integers beyond 2^53 as bigints (which `===` compares
 * by value), anything else (keywords, symbols, chars, collections, bigdecimals, tagged values) as
 * its canonical EDN text (see ednText) behind a prefix no plain string starts with. A JSON object
 * is a map with string keys, an array a vector.
 */
export type Canonical = string | number | bigint | boolean | null;

const EDN_PREFIX = '\u0000edn:';
const BIGINT_HASH_SEED = 0x3c6ef372;

/**
 * An integer in one form whichever way it came: a number when it is safe, else a bigint (so a
 * double holding 2^60 equals the bigint 2^60, and a bigint 5 equals 5).
 */
export function canonicalInteger(value: number | bigint): number | bigint {
  if (typeof value === 'bigint') return exactInteger(value);
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(value) : value;
}

export function canonical(value: unknown): Canonical {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return canonicalInteger(value);
    case 'string':
    case 'boolean':
      return value;
    default:
      return EDN_PREFIX + ednText(value, true);
  }
}

/**
 * A partition key, as `canonical` (so `:x`, `"x"` and the symbol `x` are three keys) but never
 * null or a boolean: those as their prefixed text.
 */
export function canonicalKey(key: unknown): string | number | bigint {
  const c = canonical(key);
  return c === null || typeof c === 'boolean' ? EDN_PREFIX + ednText(c, true) : c;
}

/** A canonical value (or partition key) as EDN spells it: `nil`, `"a"`, `:a`, `#{1 2}`, `0.1M`. */
export function describeCanonical(value: Canonical): string {
  if (value === null) return 'nil';
  if (typeof value === 'string') {
    return value.startsWith(EDN_PREFIX) ? value.slice(EDN_PREFIX.length) : JSON.stringify(value);
  }
  return String(value);
}

/**
 * A canonical string as plain text: a string as it is, any other EDN value as its EDN text (as a
 * keyword's own `toJSON` writes `:x`).
 */
export function canonicalText(value: string): string {
  return value.startsWith(EDN_PREFIX) ? value.slice(EDN_PREFIX.length) : value;
}

/** A value read from a history as EDN spells it, its sets and maps sorted. */
export function describeValue(value: unknown): string {
  return describeCanonical(canonical(value));
}

export function hashCanonical(value: Canonical): number {
  if (value === null) return 0x2545f491;
  if (typeof value === 'number') return hashNumber(value);
  if (typeof value === 'boolean') return value ? 0x6b43a9b5 : 0x1b873593;
  if (typeof value === 'bigint') return hashString(value.toString()) ^ BIGINT_HASH_SEED;
  return hashString(value);
}
