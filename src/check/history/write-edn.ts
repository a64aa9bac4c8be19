import type { Op } from '../../core/op.js';
import { ednText } from '../_internals/edn-text.js';
import { exactJson } from '../_internals/exact-json.js';
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

/** One op as a line of a Jepsen `history.edn`: `{:type :ok, :f :write, :value 3, :process 0, …}`. */
export function ednOp(op: Op): string {
  const fields = [
    `:type :${op.type}`,
    `:f ${ednKey(op.f)}`,
    `:value ${ednValue(op.value)}`,
    `:process ${op.process === 'nemesis' ? ':nemesis' : String(op.process)}`,
    `:time ${exactJson(op.time)}`,
    `:index ${op.index}`,
  ];
  if (op.node !== undefined) fields.push(`:node ${JSON.stringify(op.node)}`);
  if (op.error !== undefined) fields.push(`:error ${JSON.stringify(op.error)}`);
  if (op.final === true) fields.push(':final? true');
  return `{${fields.join(', ')}}`;
}
