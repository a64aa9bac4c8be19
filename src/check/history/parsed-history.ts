import type { Op } from '../../core/op.js';

/**
 * `jsonl`: our history.jsonl; `json`: one JSON array of ops (elle-cli, Knossos); `edn`: Jepsen's
 * history.edn; `jepsen-log`: Jepsen log lines; `jepsen-txt`: Jepsen's history.txt.
 */
export type HistoryFormat = 'jsonl' | 'json' | 'edn' | 'jepsen-log' | 'jepsen-txt';

/** Ops read from a file, with the line each op came from (1-based). */
export interface ParsedHistory {
  readonly format: HistoryFormat;
  readonly ops: readonly Op[];
  readonly lines: readonly number[];
  /**
   * Some op value was a Jepsen independent tuple (`#jepsen.independent.Tuple{:key k :value v}`,
   * read as `[k, v]`): each key is a register of its own, checked with the kv model.
   */
  readonly independent?: true;
}
