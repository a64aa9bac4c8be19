import { isUtf8 } from 'node:buffer';
import { readFile } from 'node:fs/promises';

import { HistoryError } from './history-error.js';
import { parseJepsenEdn } from './jepsen-edn.js';
import { parseJepsenLog } from './jepsen-log.js';
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

/** Tells our `history.jsonl`, Jepsen's `history.edn` and Jepsen log lines apart by content. */
export function parseHistory(text: string, file: string): ParsedHistory {
  const start = /\S/.exec(text);
  if (start === null) throw new HistoryError(`${file}:1: the file is empty`);
  const lineEnd = text.indexOf('\n', start.index);
  const firstLine = text.slice(start.index, lineEnd < 0 ? undefined : lineEnd).trim();
  if (firstLine.startsWith('{') && !firstLine.startsWith('{:') && isJson(firstLine)) {
    return parseHistoryJsonl(text, file);
  }
  if (/^[{[(#;]/.test(firstLine)) return parseJepsenEdn(text, file);
  if (/\bjepsen\.util\s+-/.test(text)) return parseJepsenLog(text, file);
  const line = text.slice(0, start.index).split('\n').length;
  throw new HistoryError(
    `${file}:${line}: not a history: expected history.jsonl (JSON ops), history.edn (EDN op maps) or Jepsen log lines`,
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

/** A file's text, which must be UTF-8: a byte that is not would be read as U+FFFD, making distinct values equal. */
async function readUtf8(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new HistoryError(`${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new HistoryError(`${file}:${firstLineNotUtf8(bytes)}: not UTF-8: save the history as UTF-8 text`);
  }
}

/** Reads a history file (its bytes are gone before the parse starts: a history can be large). */
export async function readHistoryFile(file: string): Promise<ParsedHistory> {
  return parseHistory(await readUtf8(file), file);
}
