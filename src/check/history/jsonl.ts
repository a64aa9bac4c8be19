import type { Op } from '../../core/op.js';
import { HistoryError } from './history-error.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';

/** Reads our `history.jsonl`: one JSON op per line; blank lines are skipped. */
export function parseHistoryJsonl(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].trim();
    if (row === '') continue;
    let fields: unknown;
    try {
      fields = JSON.parse(row);
    } catch (error) {
      throw new HistoryError(
        `${file}:${i + 1}: not JSON (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      throw new HistoryError(`${file}:${i + 1}: an op must be a JSON object`);
    }
    const op = opFromFields(fields as Record<string, unknown>, ops.length);
    if (typeof op === 'string') throw new HistoryError(`${file}:${i + 1}: ${op}`);
    ops.push(op);
    lines.push(i + 1);
  }
  return { format: 'jsonl', ops, lines };
}
