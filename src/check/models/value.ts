import { hashNumber, hashString } from '../_internals/hash.js';

/**
 * A register value in a form compared with `===`: null, booleans, numbers and strings as they are,
 * anything else as its JSON behind a prefix no plain string starts with.
 */
export type Canonical = string | number | boolean | null;

const JSON_PREFIX = '\u0000json:';

export function canonical(value: unknown): Canonical {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  return JSON_PREFIX + JSON.stringify(value);
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
  return hashString(value);
}
