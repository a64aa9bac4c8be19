import { isUtf8 } from 'node:buffer';
import { readFile } from 'node:fs/promises';

import { HistoryError } from './history-error.js';
import { parseJepsenEdn } from './jepsen-edn.js';
import { hasJepsenLogOps, isHistoryTxtLine, parseJepsenHistoryTxt, parseJepsenLog } from './jepsen-log.js';
import { parseJsonArray } from './json-array.js';
import { parseHistoryJsonl } from './jsonl.js';
import type { ParsedHistory } from './parsed-history.js';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `[` then an object with a quoted key: JSON, where EDN has `[{:type …`. */
const JSON_ARRAY_START = /^\[\s*\{\s*"/;
const EDN_START = /^[{[(#;]/;
/**
 * `{"key":` with no space before the colon: JSON lines even when the line does not parse (so that
 * the JSON reader says why, e.g. a NaN), where EDN would write `{"key" value}` or `{:key value}`.
 */
const JSON_KEY_START = /^\{\s*"(?:[^"\\]|\\.)*":/;

/**
 * Tells the formats apart by content: our `history.jsonl`, a JSON array of ops (elle-cli,
 * Knossos), Jepsen's `history.edn`, its `history.txt`, and Jepsen log lines.
 */
export function parseHistory(text: string, file: string): ParsedHistory {
  const start = /\S/.exec(text);
  if (start === null) throw new HistoryError(`${file}:1: the file is empty`);
  const lineEnd = text.indexOf('\n', start.index);
  const firstLine = text.slice(start.index, lineEnd < 0 ? undefined : lineEnd).trim();
  if (JSON_ARRAY_START.test(text.slice(start.index))) return parseJsonArray(text, file);
  if (
    firstLine.startsWith('{') &&
    !firstLine.startsWith('{:') &&
    (isJson(firstLine) || JSON_KEY_START.test(firstLine))
  ) {
    return parseHistoryJsonl(text, file);
  }
  if (isHistoryTxtLine(firstLine)) return parseJepsenHistoryTxt(text, file);
  if (hasJepsenLogOps(firstLine)) return parseJepsenLog(text, file);
  if (EDN_START.test(firstLine)) return parseJepsenEdn(text, file);
  if (hasJepsenLogOps(text)) return parseJepsenLog(text, file);
  const line = text.slice(0, start.index).split('\n').length;
  throw new HistoryError(
    `${file}:${line}: not a history: expected history.jsonl (a JSON op a line), a JSON array of ops, history.edn (EDN op maps), Jepsen's history.txt ("0\\t:invoke\\t:read\\tnil") or Jepsen log lines ("jepsen.util - 0\\t:invoke\\t:read\\tnil")`,
  );
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;

/** The line (1-based) holding the first byte sequence that is not UTF-8; no sequence spans a newline. */
function firstLineNotUtf8(bytes: Buffer): number {
  let line = 1;
  for (let start = 0; ; line++) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end < 0 || !isUtf8(bytes.subarray(start, end))) return line;
    start = end + 1;
  }
}

/** Bytes as text, which must be UTF-8: a byte that is not would be read as U+FFFD, making distinct values equal. */
function decodeUtf8(bytes: Buffer, file: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new HistoryError(`${file}:${firstLineNotUtf8(bytes)}: not UTF-8: save the history as UTF-8 text`);
  }
}

async function readUtf8(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new HistoryError(`${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`);
  }
  return decodeUtf8(bytes, file);
}

/** Reads a history file (its bytes are gone before the parse starts: a history can be large). */
export async function readHistoryFile(file: string): Promise<ParsedHistory> {
  return parseHistory(await readUtf8(file), file);
}

/** What messages call a history read from standard input. */
export const STDIN_NAME = '<stdin>';

/** Reads a history from a stream (standard input), whatever its format, as a file is read. */
export async function readHistoryStream(
  stream: AsyncIterable<Buffer | string>,
  name = STDIN_NAME,
): Promise<ParsedHistory> {
  return parseHistory(await readStreamUtf8(stream, name), name);
}

async function readStreamUtf8(stream: AsyncIterable<Buffer | string>, name: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return decodeUtf8(Buffer.concat(chunks), name);
}
