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

const QUOTE = 0x22;
const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;

/**
 * Colons after a quote (and maybe blanks): every key ends so, and a string value may hold one too,
 * so this is at least the number of keys written.
 */
function keyEnds(row: string): number {
  let count = 0;
  for (let at = row.indexOf(':'); at >= 0; at = row.indexOf(':', at + 1)) {
    let before = at - 1;
    let c = row.charCodeAt(before);
    while (c === SPACE || c === TAB || c === CR) c = row.charCodeAt(--before);
    if (c === QUOTE) count++;
  }
  return count;
}

function keyCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += keyCount(item);
    return count;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) count += 1 + keyCount(object[key]);
  return count;
}

/** True when JSON.parse may have dropped a key written twice: fewer keys read than key ends written. */
function mayHaveDroppedKeys(row: string, value: unknown): boolean {
  return keyEnds(row) > keyCount(value);
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
