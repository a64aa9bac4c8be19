import type { Op } from '../../core/op.js';
import { ednText } from '../_internals/edn-text.js';
import { exactJson } from '../../core/exact-json.js';
import { isMicroOpList } from './txn-model.js';

/** A name Clojure reads as a keyword after a colon: starts with a letter or a symbol character. */
const KEYWORD_NAME = /^[A-Za-z*+!_?<>=][\w*+!_?<>=.-]*$/;

function ednKey(key: string): string {
  return KEYWORD_NAME.test(key) ? `:${key}` : JSON.stringify(key);
}

/** An instance of a class of edn-types.ts, not a plain (or prototype-less) object or an array. */
function isEdnClassValue(value: object): boolean {
  if (Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== null && proto !== Object.prototype;
}

/**
 * A value as EDN text: null as nil, strings as strings, lists as vectors, objects as maps with
 * keyword keys where the name allows, integers exactly (beyond 2^53 too); a micro-op list gets
 * keyword micro-op names (`[:append 1 2]`), as Elle writes them. A number that is not finite has
 * no EDN a Jepsen history holds: nil.
 */
export function ednValue(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? exactJson(value) : 'nil';
    case 'boolean':
      return String(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'nil';
      // An EDN value read from a history (keyword, set, bigdecimal, tagged…): as it was written.
      if (isEdnClassValue(value)) return ednText(value, false);
      if (isMicroOpList(value))
        return `[${value.map(([f, k, v]) => `[:${f} ${ednValue(k)} ${ednValue(v)}]`).join(' ')}]`;
      if (Array.isArray(value)) return `[${value.map(ednValue).join(' ')}]`;
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      return `{${entries.map(([k, v]) => `${ednKey(k)} ${ednValue(v)}`).join(', ')}}`;
    }
    default:
      return 'nil';
  }
}

/** The register ops whose value names its key: `[key, value]` (cas: `[key, [old, new]]`). */
const KEYED_REGISTER_FS: ReadonlySet<string> = new Set(['read', 'write', 'cas']);

function isKeyedRegisterOp(op: Op): op is Op & { value: [string, unknown] } {
  return (
    op.process !== 'nemesis' &&
    KEYED_REGISTER_FS.has(op.f) &&
    Array.isArray(op.value) &&
    op.value.length === 2 &&
    typeof op.value[0] === 'string'
  );
}

/**
 * Whether a history is the register workload's, many keys at once: every read, write and cas names
 * its key (`[key, value]`). Its ops are exported as Jepsen `independent` tuples.
 */
export function hasIndependentKeys(ops: readonly Op[]): boolean {
  const register = ops.filter((op) => op.process !== 'nemesis' && KEYED_REGISTER_FS.has(op.f));
  return register.length > 0 && register.every(isKeyedRegisterOp);
}

export interface EdnOpOptions {
  /**
   * Write a keyed register op's value as `#jepsen.independent.Tuple{:key k, :value v}`, as Jepsen's
   * `independent` generator records it, so Knossos and elle-cli check each key on its own.
   */
  readonly independent?: boolean;
}

/** One op as a line of a Jepsen `history.edn`: `{:type :ok, :f :write, :value 3, :process 0, …}`. */
export function ednOp(op: Op, options: EdnOpOptions = {}): string {
  const value =
    options.independent === true && isKeyedRegisterOp(op)
      ? `#jepsen.independent.Tuple{:key ${ednValue(op.value[0])}, :value ${ednValue(op.value[1])}}`
      : ednValue(op.value);
  const fields = [
    `:type :${op.type}`,
    `:f ${ednKey(op.f)}`,
    `:value ${value}`,
    `:process ${op.process === 'nemesis' ? ':nemesis' : String(op.process)}`,
    `:time ${exactJson(op.time)}`,
    `:index ${op.index}`,
  ];
  if (op.node !== undefined) fields.push(`:node ${JSON.stringify(op.node)}`);
  if (op.error !== undefined) fields.push(`:error ${JSON.stringify(op.error)}`);
  if (op.final === true) fields.push(':final? true');
  return `{${fields.join(', ')}}`;
}
