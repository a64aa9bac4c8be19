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

export async function readHistoryFile(file: string): Promise<ParsedHistory> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new HistoryError(`${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseHistory(text, file);
}
