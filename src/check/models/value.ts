import { exactJson } from '../_internals/exact-json.js';
import { hashNumber, hashString } from '../_internals/hash.js';
import { exactInteger } from '../history/read-number.js';

/**
 * A register value in a form compared with `===`: null, booleans, numbers and strings as they are,
 * integers beyond 2^53 as bigints (which `===` compares by value), anything else as its exact JSON
 * behind a prefix no plain string starts with.
 */
export type Canonical = string | number | bigint | boolean | null;

const JSON_PREFIX = '\u0000json:';
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
      return JSON_PREFIX + exactJson(value);
  }
}

/** A partition key: strings and numbers as they are (integers exact), anything else as its exact JSON. */
export function canonicalKey(key: unknown): string | number | bigint {
  if (typeof key === 'string') return key;
  if (typeof key === 'number' || typeof key === 'bigint') return canonicalInteger(key);
  return exactJson(key);
}

export function describeCanonical(value: Canonical): string {
  if (value === null) return 'nil';
  if (typeof value === 'string') {
    return value.startsWith(JSON_PREFIX) ? value.slice(JSON_PREFIX.length) : JSON.stringify(value);
  }
  return String(value);
}

export function hashCanonical(value: Canonical): number {
  if (value === null) return 0x2545f491;
  if (typeof value === 'number') return hashNumber(value);
  if (typeof value === 'boolean') return value ? 0x6b43a9b5 : 0x1b873593;
  if (typeof value === 'bigint') return hashString(value.toString()) ^ BIGINT_HASH_SEED;
  return hashString(value);
}
