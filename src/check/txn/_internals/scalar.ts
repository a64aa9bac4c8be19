import { exactInteger } from '../../history/read-number.js';
import type { TxnScalar } from '../txn-op.js';

/**
 * A key or value in one exact form, so equal values compare equal with `===` and as Map keys: a
 * bigint that is a safe integer becomes a number. Undefined for anything else than a finite
 * number, a string or a bigint.
 */
export function toScalar(value: unknown): TxnScalar | undefined {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    case 'string':
      return value;
    case 'bigint':
      return exactInteger(value);
    default:
      return undefined;
  }
}

/** A scalar as it reads in an explanation: strings quoted, numbers and bigints as digits. */
export function showScalar(value: TxnScalar | null): string {
  if (value === null) return 'nil';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

export function showList(values: readonly TxnScalar[]): string {
  return `[${values.map(showScalar).join(' ')}]`;
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
