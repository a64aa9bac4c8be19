import type { Op } from '../../core/op.js';
import { readEdnForms } from './edn.js';
import { HistoryError } from './history-error.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';

/** Reads a Jepsen `history.edn`: op maps such as `{:type :invoke, :f :write, :value 3, :process 0}`. */
export function parseJepsenEdn(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  for (const form of readEdnForms(text, file)) {
    const fields = form.value;
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      throw new HistoryError(
        `${file}:${form.line}: an op must be a map such as {:type :invoke, :f :read, :process 0}`,
      );
    }
    const op = opFromFields(fields as Readonly<Record<string, unknown>>, ops.length);
    if (typeof op === 'string') throw new HistoryError(`${file}:${form.line}: ${op}`);
    ops.push(op);
    lines.push(form.line);
  }
  return { format: 'edn', ops, lines };
}
