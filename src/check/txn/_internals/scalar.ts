import { canonicalInteger, canonicalKey, canonicalText, describeCanonical } from '../../models/value.js';
import type { TxnScalar } from '../txn-op.js';

/**
 * A key or value in one form per value under EDN's equality, so equal values compare equal with
 * `===` and as Map keys, as registers and independent keys compare (models/value.ts `canonical`):
 * numbers and strings as they are (an integer beyond 2^53 as a bigint), anything else — a keyword
 * `:x` (never the string "x"), a vector `[:anti 5]`, a map — as its canonical EDN text behind a
 * prefix no plain string starts with. Undefined for nil (no key, no written value) and for what is
 * no value (undefined, a function, a non-finite number).
 */
export function toScalar(value: unknown): TxnScalar | undefined {
  switch (typeof value) {
    case 'number':
      if (Number.isSafeInteger(value)) return value;
      return Number.isFinite(value) ? canonicalInteger(value) : undefined;
    case 'string':
      return value;
    case 'bigint':
      return canonicalInteger(value);
    case 'boolean':
      return canonicalKey(value);
    case 'object':
      return value === null ? undefined : canonicalKey(value);
    default:
      return undefined;
  }
}

/** A key or value as EDN spells it: strings quoted, `:x` a keyword, `[:anti 5]` a vector, numbers as digits. */
export function showScalar(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (value instanceof EdnText) return value.text;
  const scalar = toScalar(value);
  return scalar === undefined ? showAny(value) : describeCanonical(scalar);
}

export function showList(values: readonly unknown[]): string {
  return `[${values.map(showScalar).join(' ')}]`;
}

/** A key or value in a report that is neither a number nor a string: JSON writes its EDN text, as a keyword's own `toJSON` does (`":x"`). */
export class EdnText {
  constructor(readonly text: string) {}
  toJSON(): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
}

/** A key or value as a report holds it: a number or string as it is, any other EDN value as EdnText. */
export type ReportScalar = number | string | bigint | EdnText;

export function reportScalar(value: TxnScalar): ReportScalar {
  if (typeof value !== 'string') return value;
  const text = canonicalText(value);
  return text === value ? value : new EdnText(text);
}

/** A value of a history as it reads in an error message, whatever it is. */
export function showAny(value: unknown): string {
  if (typeof value === 'bigint') return String(value);
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}
