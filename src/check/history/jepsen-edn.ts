import type { Op } from '../../core/op.js';
import { readEdnForms } from './edn.js';
import { ednOpFields } from './edn-op.js';
import { HistoryError } from './history-error.js';
import { opFromFields } from './op-fields.js';
import type { ParsedHistory } from './parsed-history.js';

/**
 * Reads a Jepsen `history.edn`: op maps such as `{:type :invoke, :f :write, :value 3, :process 0}`,
 * or Knossos's op tuples `[0 :invoke :write 3]`, one collection of them or one a line.
 */
export function parseJepsenEdn(text: string, file: string): ParsedHistory {
  const ops: Op[] = [];
  const lines: number[] = [];
  let independent = false;
  for (const form of readEdnForms(text, file)) {
    const read = ednOpFields(form.value);
    if (read === undefined) {
      throw new HistoryError(
        `${file}:${form.line}: an op must be a map such as {:type :invoke, :f :read, :process 0}, or a tuple [process type f value]`,
      );
    }
    const op = opFromFields(read.fields, ops.length);
    if (typeof op === 'string') throw new HistoryError(`${file}:${form.line}: ${op}`);
    independent ||= read.independent;
    ops.push(op);
    lines.push(form.line);
  }
  return { format: 'edn', ops, lines, ...(independent ? { independent } : {}) };
}
