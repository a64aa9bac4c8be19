import type { Op } from '../../core/op.js';
import { exactJson } from '../../core/exact-json.js';

/** Each op's position in the history (its realtime order). */
export function positionsOf(ops: readonly Op[]): Map<Op, number> {
  return new Map(ops.map((op, i) => [op, i]));
}

/** An op's key and value: `[key, v]` values (several keys) or a bare `v` (one object, key `undefined`). */
export interface KeyedValue {
  readonly keyed: boolean;
  readonly key: unknown;
  readonly v: unknown;
  /** The key as exact JSON, to group by. */
  readonly id: string;
}

/**
 * Reads an invocation's key: its value is `[key, v]` when the history has several keys (Jepsen's
 * independent keys), else the bare `v` of the one object.
 */
export function opKey(invoke: Op): KeyedValue {
  const value = invoke.value;
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    (typeof value[0] === 'string' || typeof value[0] === 'number')
  ) {
    return { keyed: true, key: value[0], v: value[1], id: exactJson(value[0]) };
  }
  return { keyed: false, key: undefined, v: value, id: '' };
}

/** A completion's value, read as its invocation's key says (`[key, v]` or bare). */
export function completedValue(completion: Op, keyed: boolean): unknown {
  const value = completion.value;
  return keyed && Array.isArray(value) && value.length === 2 ? value[1] : value;
}

/** `process 3's read (op 41, ok at op 45 on n2)` — an op named by what a reader can find in the history. */
export function describePair(invoke: Op, completion: Op | undefined): string {
  const node = (completion ?? invoke).node;
  const outcome =
    completion === undefined ? 'never completed' : `${completion.type} at op ${completion.index}`;
  return `process ${String(invoke.process)}'s ${invoke.f} (op ${invoke.index}, ${outcome}${node === undefined ? '' : ` on ${node}`})`;
}
