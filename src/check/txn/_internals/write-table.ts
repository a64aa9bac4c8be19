import type { TxnScalar } from '../txn-op.js';
import { IntList } from './int-list.js';

/**
 * Every write of a history (an append or a register write) by id, with its key (interned as a key
 * id), value and transaction, and whether it is the transaction's last write to that key.
 */
export class WriteTable {
  readonly keys: TxnScalar[] = [];
  private readonly keyIds = new Map<TxnScalar, number>();
  /** Per key id: value → write id. */
  readonly byValue: Map<TxnScalar, number>[] = [];
  readonly txn = new IntList();
  readonly key = new IntList();
  readonly values: TxnScalar[] = [];
  readonly final = new IntList();
  /** The write's micro-op index in its transaction. */
  readonly slot = new IntList();

  keyId(key: TxnScalar): number {
    let id = this.keyIds.get(key);
    if (id === undefined) {
      id = this.keys.length;
      this.keys.push(key);
      this.keyIds.set(key, id);
      this.byValue.push(new Map());
    }
    return id;
  }

  /** Records a write and returns its id, or -1 - the id of an earlier write of the same value. */
  add(txn: number, keyId: number, value: TxnScalar, final: boolean, slot: number): number {
    const byValue = this.byValue[keyId];
    const earlier = byValue.get(value);
    if (earlier !== undefined) return -1 - earlier;
    const id = this.values.length;
    byValue.set(value, id);
    this.txn.push(txn);
    this.key.push(keyId);
    this.values.push(value);
    this.final.push(final ? 1 : 0);
    this.slot.push(slot);
    return id;
  }

  /** The write of `value` to the key, or -1 when no transaction wrote it. */
  find(keyId: number, value: TxnScalar): number {
    return this.byValue[keyId].get(value) ?? -1;
  }
}
