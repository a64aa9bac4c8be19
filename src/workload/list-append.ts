import type { Rng } from '../core/random.js';
import { TxnGenerator, type TxnGeneratorOptions } from './_internals/txn-generator.js';

/** Jepsen's list-append shape: a few keys, up to 4 micro-ops, a key retired after 32 appends. */
export const LIST_APPEND_DEFAULTS: TxnGeneratorOptions = { keys: 4, maxTxnLength: 4, writesPerKey: 32 };

/**
 * Transactions of `["append", k, v]` and `["r", k, null]` micro-ops over rotating keys named
 * `<prefix>-k<n>`; appended values are unique per key. Checked by `checkListAppend`.
 */
export function listAppendTxns(
  rng: Rng,
  prefix: string,
  options: TxnGeneratorOptions = LIST_APPEND_DEFAULTS,
): TxnGenerator {
  return new TxnGenerator(rng, 'append', prefix, options);
}
