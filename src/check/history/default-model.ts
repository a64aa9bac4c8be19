import { isClientOp } from '../../core/op.js';
import type { ModelName } from '../model.js';
import type { ParsedHistory } from './parsed-history.js';

const REGISTER_FS: ReadonlySet<string> = new Set(['read', 'write', 'cas']);

function isKvValue(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    (typeof value[0] === 'string' || typeof value[0] === 'number' || typeof value[0] === 'bigint')
  );
}

/**
 * The model a history most likely means: Jepsen log lines (etcd) are one cas-register; register
 * ops whose invokes all carry `[key, v]` are kv; `add` with list reads is a set, with number reads a
 * counter; otherwise a cas-register (a superset of register).
 */
export function defaultModel(history: ParsedHistory): ModelName {
  if (history.format === 'jepsen-log') return 'cas-register';
  const invokes = history.ops.filter((op) => isClientOp(op) && op.type === 'invoke');
  if (invokes.some((op) => op.f === 'add')) {
    const read = history.ops.find((op) => isClientOp(op) && op.type === 'ok' && op.f === 'read');
    return read !== undefined && Array.isArray(read.value) ? 'set' : 'counter';
  }
  const registerOps = invokes.filter((op) => REGISTER_FS.has(op.f));
  if (registerOps.length > 0 && registerOps.every((op) => isKvValue(op.value))) return 'kv';
  return 'cas-register';
}
