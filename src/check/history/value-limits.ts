/**
 * How deep a value read from a history may nest: no real history comes close, and deeper would
 * exhaust the stack of the reader or of whatever handles the value next.
 */
export const MAX_NESTING_DEPTH = 100;

/** The most digits an integer literal may have (reading a BigInt takes time quadratic in its digits). */
export const MAX_INTEGER_DIGITS = 1000;
