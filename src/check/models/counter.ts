import { exactJson } from '../../core/exact-json.js';
import { hashNumber } from '../_internals/hash.js';
import type { Model } from '../model.js';

export type CounterInput = { readonly f: 'add'; readonly delta: number } | { readonly f: 'read' };

const READ: CounterInput = { f: 'read' };

/** Counts are doubles, exact only up to 2^53: a count beyond is refused rather than rounded. */
function toNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`a counter ${what} must be a number, got ${exactJson(value)}`);
  }
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw new Error(`a counter ${what} must be within ±(2^53 - 1), got ${exactJson(value)}`);
  }
  return value;
}

/** A counter starting at 0: `add` (or `increment`) by `value` (default 1), `read` returns the count. */
export const counterModel: Model<number, CounterInput, number> = {
  name: 'counter',
  input(f, value) {
    if (f === 'read') return READ;
    if (f === 'add' || f === 'increment' || f === 'inc') {
      return { f: 'add', delta: value === null || value === undefined ? 1 : toNumber(value, f) };
    }
    throw new Error(`model counter knows add, increment, read; got f=${f}`);
  },
  output: (f, value) => (f === 'read' ? toNumber(value, 'read') : 0),
  init: () => 0,
  step(state, input, output) {
    if (input.f === 'add') return state + input.delta;
    return output === undefined || output === state ? state : undefined;
  },
  hash: hashNumber,
  equal: (a, b) => a === b,
  describe: String,
};
