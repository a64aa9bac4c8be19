import type { EdnValue } from './edn.js';
import { EdnMap, INDEPENDENT_TUPLE_TAG, Keyword, Tagged, plainValue } from './edn-types.js';
import { setOwn } from './set-own.js';
import { isMicroOpList } from './txn-model.js';

/** An op's value as checks read it, and whether it was one of Jepsen's independent tuples. */
export interface EdnOpValue {
  readonly value: unknown;
  readonly independent: boolean;
}

/** Where Knossos's `[process type f value]` op tuples keep each field. */
const TUPLE_FIELDS = ['process', 'type', 'f', 'value'] as const;

function isOpTuple(form: EdnValue): form is readonly EdnValue[] {
  return Array.isArray(form) && form.length === TUPLE_FIELDS.length && form[1] instanceof Keyword;
}

function isIndependentTuple(value: unknown): value is Tagged & { readonly value: EdnMap } {
  return value instanceof Tagged && value.tag === INDEPENDENT_TUPLE_TAG && value.value instanceof EdnMap;
}

/**
 * A micro-op `[:append :x 1]` with its name plain (`["append", :x, 1]`), as the transactional
 * checks read it; its key and value keep their EDN types, so `:x` and `"x"` stay two keys.
 */
function plainMicroOpName(microOp: EdnValue): EdnValue {
  if (!Array.isArray(microOp) || microOp.length === 0) return microOp;
  const [name, ...rest] = microOp as readonly EdnValue[];
  return [plainValue(name) as EdnValue, ...rest];
}

/**
 * An op's value: a Jepsen independent tuple becomes `[key, value]`, which the kv model checks key
 * by key as Jepsen's `independent` checker does; a transaction's micro-ops (`[:append :x 1]`) get
 * plain names, as the transactional checks read them. Any other value (and the keys and values
 * of micro-ops) keeps its EDN types.
 */
export function ednOpValue(f: unknown, value: EdnValue | undefined): EdnOpValue {
  if (isIndependentTuple(value)) {
    return { value: [value.value.get('key') ?? null, value.value.get('value') ?? null], independent: true };
  }
  if (f === 'txn' || (Array.isArray(value) && Array.isArray(value[0]) && value[0][0] instanceof Keyword)) {
    const microOps = Array.isArray(value) ? value.map(plainMicroOpName) : plainValue(value);
    if (f === 'txn' || isMicroOpList(microOps)) return { value: microOps, independent: false };
  }
  return { value, independent: false };
}

/**
 * The fields of an op written as an EDN map (`{:type :ok, :f :read, :value 1}`) or as a Knossos
 * tuple (`[0 :ok :read 1]`): names as plain strings, the value as `ednOpValue` reads it; undefined
 * when the form is neither.
 */
export function ednOpFields(
  form: EdnValue,
): { readonly fields: Record<string, unknown>; readonly independent: boolean } | undefined {
  const fields: Record<string, unknown> = {};
  let raw: EdnValue | undefined;
  if (form instanceof EdnMap) {
    for (const [key, value] of form.entries) {
      const name = plainValue(key);
      const field = typeof name === 'string' ? name : String(name);
      if (field === 'value') raw = value as EdnValue;
      else setOwn(fields, field, plainValue(value));
    }
  } else if (isOpTuple(form)) {
    TUPLE_FIELDS.forEach((field, i) => {
      if (field === 'value') raw = form[i];
      else fields[field] = plainValue(form[i]);
    });
  } else {
    return undefined;
  }
  const { value, independent } = ednOpValue(fields.f, raw);
  if (raw !== undefined) fields.value = value;
  return { fields, independent };
}
