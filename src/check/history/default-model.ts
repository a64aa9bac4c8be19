import { isClientOp } from '../../core/op.js';
import type { ModelName } from '../model.js';
import { EdnSet, Keyword } from './edn-types.js';
import type { ParsedHistory } from './parsed-history.js';

const REGISTER_FS: ReadonlySet<string> = new Set(['read', 'write', 'cas']);
/** Porcupine's key-value ops. */
const STRING_KV_FS: ReadonlySet<string> = new Set(['get', 'put', 'append']);

function isKvValue(f: string, value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    (typeof value[0] === 'string' ||
      typeof value[0] === 'number' ||
      typeof value[0] === 'bigint' ||
      value[0] instanceof Keyword) &&
    (f !== 'cas' || (Array.isArray(value[1]) && value[1].length === 2))
  );
}

/**
 * The model a history most likely means: Jepsen independent tuples are kv; register ops whose invokes all carry `[key, v]` (a cas
 * `[key, [old, new]]`) are kv, so a cas `[old, new]` alone is not; `add` with list reads is a set,
 * with number reads a counter; get, put or append (Porcupine's key-value histories) string-kv; otherwise a cas-register (a superset of register).
 */
export function defaultModel(history: ParsedHistory): ModelName {
  if (history.independent === true) return 'kv';
  const invokes = history.ops.filter((op) => isClientOp(op) && op.type === 'invoke');
  if (invokes.some((op) => op.f === 'add')) {
    const read = history.ops.find((op) => isClientOp(op) && op.type === 'ok' && op.f === 'read');
    return read !== undefined && (Array.isArray(read.value) || read.value instanceof EdnSet)
      ? 'set'
      : 'counter';
  }
  if (invokes.some((op) => STRING_KV_FS.has(op.f))) return 'string-kv';
  const registerOps = invokes.filter((op) => REGISTER_FS.has(op.f));
  if (registerOps.length > 0 && registerOps.every((op) => isKvValue(op.f, op.value))) return 'kv';
  return 'cas-register';
}
