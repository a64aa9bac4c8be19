import { type GraphBuilder, PROCESS } from './dependency-graph.js';
import { FAILED, OK, type TxnTable } from './txn-table.js';

/**
 * Realtime edges: T1 → T2 when T1 completed (ok) before T2 was invoked. Only a transitive
 * reduction is added, as in Elle: the invoke of T2 gets an edge from each transaction on the
 * frontier (completed, with no completed successor yet), and a completion takes its own
 * predecessors off the frontier. So the edges number about invocations × concurrency, not n².
 * Indeterminate transactions never complete, so they get edges in but none out.
 */
export function addRealtimeEdges(table: TxnTable<unknown>, builder: GraphBuilder): void {
  const frontier = new Set<number>();
  const predecessorsFrom = new Int32Array(table.count);
  const predecessorsTo = new Int32Array(table.count);
  for (const event of table.events) {
    if (event >= 0) {
      if (table.status[event] === FAILED) continue;
      predecessorsFrom[event] = builder.realtimeCount;
      for (const earlier of frontier) builder.addRealtime(earlier, event);
      predecessorsTo[event] = builder.realtimeCount;
    } else {
      const txn = ~event;
      if (table.status[txn] !== OK) continue;
      for (let i = predecessorsFrom[txn]; i < predecessorsTo[txn]; i++)
        frontier.delete(builder.realtimeSource(i));
      frontier.add(txn);
    }
  }
}

/**
 * Process edges: each process's transactions in order. An indeterminate transaction may still take
 * effect after its process moved on, so it gets an edge in and none out; failed ones are skipped.
 */
export function addProcessEdges(table: TxnTable<unknown>, builder: GraphBuilder): void {
  const last = new Map<number | string, number>();
  for (let txn = 0; txn < table.count; txn++) {
    const status = table.status[txn];
    if (status === FAILED) continue;
    const process = table.process[txn];
    const previous = last.get(process);
    if (previous !== undefined) builder.add(previous, txn, PROCESS);
    if (status === OK) last.set(process, txn);
    else last.delete(process);
  }
}
