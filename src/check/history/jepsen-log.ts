import type { Op } from '../../core/op.js';
import { readEdnValue } from './edn.js';
import { HistoryError } from './history-error.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';
import { readNumber } from './read-number.js';

/** `… jepsen.util - <process> :<type> :<f> <value>` (tabs, or spaces in some logs). */
const OP_LINE = /\bjepsen\.util\s+-\s+(\S+)\s+:(\S+)\s+(\S+)\s*(.*)$/;
const OP_TYPE_AFTER_PROCESS = /\bjepsen\.util\s+-\s+\S+\s+:/;

/**
 * Reads Jepsen log lines as in Porcupine's etcd histories. Other log lines are skipped; a line that
 * looks like an op but does not read is an error, and so is a file with no op at all.
 */
export function parseJepsenLog(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (!OP_TYPE_AFTER_PROCESS.test(row)) continue;
    const line = i + 1;
    const m = OP_LINE.exec(row);
    if (m === null) throw new HistoryError(`${file}:${line}: cannot read this Jepsen op line`);
    const [, processText, type, fText, valueText] = m;
    const process = /^\d+$/.test(processText)
      ? (readNumber(processText) ?? processText)
      : processText.replace(/^:/, '');
    const f = fText.replace(/^:/, '');
    const value = valueText.trim() === '' ? null : readEdnValue(valueText.trim(), file, line);
    const position = ops.length;
    const op = opFromFields({ type, f, process, value, index: position, time: position }, position);
    if (typeof op === 'string') throw new HistoryError(`${file}:${line}: ${op}`);
    ops.push(op);
    lines.push(line);
  }
  if (ops.length === 0) {
    throw new HistoryError(
      `${file}:1: no Jepsen op lines ("INFO jepsen.util - <process> :<type> :<f> <value>")`,
    );
  }
  return { format: 'jepsen-log', ops, lines };
}
