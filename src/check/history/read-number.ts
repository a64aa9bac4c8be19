import { MAX_INTEGER_DIGITS } from './value-limits.js';

const INTEGER_LITERAL = /^[+-]?(\d+)$/;

/**
 * The number a decimal literal (already known to be one) means. An integer literal is read
 * exactly: a number when it is a safe integer, else a bigint, because a double would round
 * 2^53 + 1 to 2^53 and merge distinct values. Other literals (with a fraction or an exponent) are
 * doubles. Undefined when out of range: not finite, or an integer of more than MAX_INTEGER_DIGITS
 * digits.
 */
export function readNumber(literal: string): number | bigint | undefined {
  const n = Number(literal);
  const integer = INTEGER_LITERAL.exec(literal);
  if (integer === null) return Number.isFinite(n) ? n : undefined;
  if (Number.isSafeInteger(n)) return n;
  return integer[1].length > MAX_INTEGER_DIGITS ? undefined : BigInt(literal);
}

/** A bigint as a number when that is exact (a safe integer), so equal integers have one form. */
export function exactInteger(value: bigint): number | bigint {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}
