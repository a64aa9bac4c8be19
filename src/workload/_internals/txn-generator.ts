import type { Rng } from '../../core/random.js';
import type { MicroOp } from '../../systems/system.js';

export interface TxnGeneratorOptions {
  /** Keys in use at once. */
  readonly keys: number;
  /** Micro-ops per transaction: from 1 to this many, uniformly. */
  readonly maxTxnLength: number;
  /** Writes a key gets before it is retired and a fresh key takes its place. */
  readonly writesPerKey: number;
}

interface ActiveKey {
  readonly name: string;
  writes: number;
}

/**
 * Transactions over a small rotating set of keys, as Jepsen's list-append and rw-register
 * workloads make them: each micro-op reads or writes (half and half) a key drawn from the active
 * set; a key's writes carry 1, 2, 3, … (unique per key, as the checkers need), and a key that has
 * had `writesPerKey` of them is retired for a fresh one, so every key's history stays short.
 */
export class TxnGenerator {
  /** Every key handed out, in order (for the final reads). */
  readonly used: string[] = [];
  private readonly active: ActiveKey[] = [];
  private keySeq = 0;

  constructor(
    private readonly rng: Rng,
    private readonly write: 'append' | 'w',
    private readonly prefix: string,
    private readonly options: TxnGeneratorOptions,
  ) {
    if (!(options.keys >= 1 && options.maxTxnLength >= 1 && options.writesPerKey >= 1)) {
      throw new RangeError('TxnGenerator needs keys, maxTxnLength and writesPerKey of at least 1');
    }
    for (let i = 0; i < options.keys; i++) this.active.push(this.freshKey());
  }

  /** The next transaction's micro-ops, reads carrying `null`. */
  next(): MicroOp[] {
    const length = this.rng.range(1, this.options.maxTxnLength);
    const ops: MicroOp[] = [];
    for (let i = 0; i < length; i++) {
      const slot = this.rng.int(this.active.length);
      const key = this.active[slot];
      if (this.rng.chance(0.5)) {
        ops.push(['r', key.name, null]);
        continue;
      }
      key.writes++;
      ops.push([this.write, key.name, key.writes]);
      if (key.writes >= this.options.writesPerKey) this.active[slot] = this.freshKey();
    }
    return ops;
  }

  private freshKey(): ActiveKey {
    const name = `${this.prefix}-k${this.keySeq++}`;
    this.used.push(name);
    return { name, writes: 0 };
  }
}
