import type { Op } from '../../core/op.js';
import { HistoryError } from './history-error.js';
import { readJsonValue } from './json-value.js';
import { MAX_NESTING_DEPTH } from './value-limits.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';

/**
 * What JSON.parse might misread: an integer of 16 digits or more (it could pass 2^53 and be
 * rounded), or an exponent of three digits (it could overflow to Infinity).
 */
const MAYBE_INEXACT = /\d{16}|[eE][+-]?\d{3}/;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

function deeperThanAllowed(row: string): boolean {
  if (row.length <= MAX_NESTING_DEPTH) return false;
  let opens = 0;
  for (let i = 0; i < row.length; i++) {
    const c = row.charCodeAt(i);
    if (c === OPEN_BRACKET || c === OPEN_BRACE) opens++;
  }
  return opens > MAX_NESTING_DEPTH;
}

/** A quote then a colon: each key ends so (a string value may hold one too, so it is an upper bound). */
const KEY_END = /"\s*:/g;

function keyCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + keyCount(item), 0);
  let count = 0;
  for (const item of Object.values(value)) count += 1 + keyCount(item);
  return count;
}

/** True when JSON.parse may have dropped a key written twice: fewer keys read than key ends written. */
function mayHaveDroppedKeys(row: string, value: unknown): boolean {
  return (row.match(KEY_END)?.length ?? 0) > keyCount(value);
}

/**
 * One row: through the native JSON.parse when it cannot misread it (most rows: several times
 * faster), else through our exact reader, which also words the errors and refuses a key twice.
 */
function readRow(row: string, file: string, line: number): unknown {
  if (!MAYBE_INEXACT.test(row) && !deeperThanAllowed(row)) {
    try {
      const value: unknown = JSON.parse(row);
      if (!mayHaveDroppedKeys(row, value)) return value;
    } catch {
      // not JSON: the exact reader says where and why
    }
  }
  return readJsonValue(row, file, line);
}

/**
 * Reads our `history.jsonl`: one JSON op per line; blank lines are skipped. Integers beyond 2^53
 * stay exact (see readJsonValue).
 */
export function parseHistoryJsonl(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].trim();
    if (row === '') continue;
    const line = i + 1;
    const fields = readRow(row, file, line);
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      throw new HistoryError(`${file}:${line}: an op must be a JSON object`);
    }
    const op = opFromFields(fields as Record<string, unknown>, ops.length);
    if (typeof op === 'string') throw new HistoryError(`${file}:${line}: ${op}`);
    ops.push(op);
    lines.push(line);
  }
  return { format: 'jsonl', ops, lines };
}
