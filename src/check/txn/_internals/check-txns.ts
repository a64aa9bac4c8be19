import type { TxnOpInput } from '../txn-op.js';
import type { TxnCheckOptions, TxnCheckResult } from '../txn-check-result.js';
import { GraphBuilder, DATA_EDGES, PROCESS, REALTIME } from './dependency-graph.js';
import { anomaliesForbiddenBy } from '../consistency-model.js';
import { explainCycle } from './explain-cycle.js';
import { addFirstCommitterEdges } from './first-committer-wins.js';
import { findCycles } from './find-cycles.js';
import { addProcessEdges, addRealtimeEdges } from './order-edges.js';
import { type MicroOpGrammar, type TxnTable, readTxns } from './txn-table.js';
import { AnomalyLog, resolveOptions } from './txn-verdict.js';
import { WriteTable } from './write-table.js';

/** About how many edges a transaction of a few micro-ops gets: wr, rw, ww and a few realtime. */
const EDGES_PER_TXN = 4;

/** What a transactional checker brings to the common driver. */
export interface TxnChecker<T extends TxnOpInput> {
  /** Its name in errors (`checkListAppend`). */
  readonly caller: string;
  readonly grammar: MicroOpGrammar;
  /** How an explanation says a transaction wrote (`appended`, `wrote`). */
  readonly wrote: 'appended' | 'wrote';
  /**
   * Records the writes, infers each key's version order from the reads and adds the data edges
   * (ww, wr, rw), logging the anomalies that are not cycles on the way.
   */
  analyse(table: TxnTable<T>, writes: WriteTable, builder: GraphBuilder, log: AnomalyLog<T>): void;
}

/**
 * The part every transactional checker shares: read the transactions, let the checker add its data
 * edges, add realtime and process edges when the model asks for them, find and classify the cycles,
 * and give the verdict for `options.model`.
 */
export function checkTxns<T extends TxnOpInput>(
  checker: TxnChecker<T>,
  ops: readonly T[],
  options: TxnCheckOptions,
): TxnCheckResult<T> {
  const startMs = performance.now();
  const resolved = resolveOptions(checker.caller, options);
  const table = readTxns(ops, checker.grammar);
  const log = new AnomalyLog<T>();
  const writes = new WriteTable();
  const builder = new GraphBuilder(table.count, EDGES_PER_TXN * table.count);
  checker.analyse(table, writes, builder, log);
  if (anomaliesForbiddenBy(resolved.model).has('G-single'))
    addFirstCommitterEdges(table.count, writes, builder);
  let enabled = DATA_EDGES;
  if (resolved.realtime) {
    addRealtimeEdges(table, builder);
    enabled |= REALTIME;
  }
  if (resolved.process) {
    addProcessEdges(table, builder);
    enabled |= PROCESS;
  }
  const graph = builder.build();
  for (const cycle of findCycles(graph, enabled))
    log.add(explainCycle(cycle, graph, table, writes, { wrote: checker.wrote }));
  return log.verdict(resolved, table.count, startMs);
}
