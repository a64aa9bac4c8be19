/** What a transactional key holds: a list (list-append) or a register (rw-register). */
export type TxnValue = number | readonly number[];

/**
 * A key's value as etcd stores it: JSON, so a list (`[1,2,3]`) and a register (`7`) tell
 * themselves apart and a read needs no knowledge of the workload.
 */
export function encodeTxnValue(value: TxnValue): string {
  return JSON.stringify(value);
}

/** The value stored by `encodeTxnValue`, or undefined for text it did not write. */
export function decodeTxnValue(text: string): TxnValue | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (Number.isSafeInteger(value)) return value as number;
  if (Array.isArray(value) && value.every((v) => Number.isSafeInteger(v))) return value as number[];
  return undefined;
}
