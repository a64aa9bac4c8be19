import type { Rng } from '../core/random.js';
import { TxnGenerator, type TxnGeneratorOptions } from './_internals/txn-generator.js';

/** Jepsen's rw-register shape: a few keys, up to 4 micro-ops, a key retired after 32 writes. */
export const RW_REGISTER_DEFAULTS: TxnGeneratorOptions = { keys: 4, maxTxnLength: 4, writesPerKey: 32 };

/**
 * Transactions of `["w", k, v]` and `["r", k, null]` micro-ops over rotating keys named
 * `<prefix>-k<n>`; written values are unique per key. Checked by `checkRwRegister`.
 */
export function rwRegisterTxns(
  rng: Rng,
  prefix: string,
  options: TxnGeneratorOptions = RW_REGISTER_DEFAULTS,
): TxnGenerator {
  return new TxnGenerator(rng, 'w', prefix, options);
}
