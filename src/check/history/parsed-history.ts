import type { Op } from '../../core/op.js';

export type HistoryFormat = 'jsonl' | 'edn' | 'jepsen-log';

/** Ops read from a file, with the line each op came from (1-based). */
export interface ParsedHistory {
  readonly format: HistoryFormat;
  readonly ops: readonly Op[];
  readonly lines: readonly number[];
}
