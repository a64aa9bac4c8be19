import type { Op } from '../../core/op.js';
import { HistoryError } from './history-error.js';
import { readJsonArray } from './json-value.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';
import { setOwn } from './set-own.js';

/** Fields whose values name something, which a converter from EDN may leave as `":invoke"`. */
const NAME_FIELDS: ReadonlySet<string> = new Set(['type', 'f', 'process']);
const KEYWORD = /^:[^\s:]/;

function unkeyword(value: unknown): unknown {
  return typeof value === 'string' && KEYWORD.test(value) ? value.slice(1) : value;
}

/** A micro-op `[":r", k, v]` as `["r", k, v]`; any other value as it is. */
function unkeywordMicroOps(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((mop: unknown) =>
    Array.isArray(mop) && mop.length === 3 ? [unkeyword(mop[0]), mop[1], mop[2]] : mop,
  );
}

/**
 * An op object's fields with EDN keywords written as strings read as names: `{":type": ":invoke"}`
 * as `{"type": "invoke"}`.
 */
function opFields(object: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [rawKey, raw] of Object.entries(object)) {
    const key = unkeyword(rawKey) as string;
    const value = NAME_FIELDS.has(key) ? unkeyword(raw) : key === 'value' ? unkeywordMicroOps(raw) : raw;
    setOwn(fields, key, value);
  }
  return fields;
}

/**
 * Reads a file holding one JSON array of op objects, as elle-cli and Knossos's JSON histories are:
 * `[{"type":"invoke","f":"read","value":null,"process":0}, …]`, on one line or many.
 */
export function parseJsonArray(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  for (const { value, line } of readJsonArray(text, file)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new HistoryError(
        `${file}:${line}: an op must be a JSON object such as {"type":"invoke","f":"read","process":0}`,
      );
    }
    const op = opFromFields(opFields(value as Record<string, unknown>), ops.length);
    if (typeof op === 'string') throw new HistoryError(`${file}:${line}: ${op}`);
    ops.push(op);
    lines.push(line);
  }
  if (ops.length === 0) throw new HistoryError(`${file}:1: the array holds no ops`);
  return { format: 'json', ops, lines };
}
