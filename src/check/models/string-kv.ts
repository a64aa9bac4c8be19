import { exactJson } from '../../core/exact-json.js';
import { hashString } from '../_internals/hash.js';
import type { Model } from '../model.js';
import { canonicalKey } from './value.js';

/** What a string-kv op asks for: the key's string, a new string, or a string added to its end. */
export type StringKvInput =
  | { readonly f: 'get' }
  | { readonly f: 'put'; readonly value: string }
  | { readonly f: 'append'; readonly value: string };

const GET: StringKvInput = { f: 'get' };

/** `[key, v]`: the op's `key` field joined to its value by the history readers, or a tuple as written. */
function splitKeyed(value: unknown): readonly [key: unknown, v: unknown] {
  if (!Array.isArray(value) || value.length !== 2) {
    throw new Error(
      `a string-kv op needs a key (a :key field, or a value [key, v]); got ${exactJson(value)}`,
    );
  }
  return [value[0], value[1]];
}

function asString(v: unknown, f: string): string {
  if (typeof v !== 'string') throw new Error(`a string-kv ${f} value must be a string, got ${exactJson(v)}`);
  return v;
}

/**
 * Porcupine's key-value model: each key holds a string, the empty string before any write; `get`
 * returns it, `put` replaces it, `append` adds to its end. Checked key by key. An append's result
 * depends on the state it finds, so the model gives the search no state to prune by.
 */
export const stringKvModel: Model<string, StringKvInput, string> = {
  name: 'string-kv',
  partitionKey: (_f, value) => canonicalKey(splitKeyed(value)[0]),
  input(f, value) {
    const v = splitKeyed(value)[1];
    switch (f) {
      case 'get':
        return GET;
      case 'put':
      case 'append':
        return { f, value: asString(v, f) };
      default:
        throw new Error(`model string-kv knows get, put, append; got f=${f}`);
    }
  },
  output: (f, value) => (f === 'get' ? asString(splitKeyed(value)[1], 'get') : ''),
  init: () => '',
  step(state, input, output) {
    switch (input.f) {
      case 'get':
        return output === undefined || output === state ? state : undefined;
      case 'put':
        return input.value;
      case 'append':
        return state + input.value;
    }
  },
  hash: hashString,
  equal: (a, b) => a === b,
  describe: (state) => JSON.stringify(state),
};
