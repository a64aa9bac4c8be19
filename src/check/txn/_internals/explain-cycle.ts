import type { CycleAnomaly, DependencyEdge } from '../anomaly.js';
import type { TxnOpInput } from '../txn-op.js';
import { type DependencyGraph, FCW, PROCESS, REALTIME, RW, WR, WW } from './dependency-graph.js';
import type { FoundCycle } from './find-cycles.js';
import { showScalar } from './scalar.js';
import type { TxnTable } from './txn-table.js';
import type { WriteTable } from './write-table.js';

/** How a workload words its writes: list-append appends, rw-register writes. */
export interface Wording {
  readonly wrote: 'appended' | 'wrote';
}

/** A transaction's name in explanations: T and its op's index (or position in the history). */
export function txnName(table: TxnTable<TxnOpInput>, txn: number): string {
  return `T${table.ops[txn].index ?? table.positions[txn]}`;
}

function edgeOf(
  graph: DependencyGraph,
  table: TxnTable<TxnOpInput>,
  writes: WriteTable,
  from: number,
  edge: number,
): DependencyEdge {
  if (edge >= graph.to.length) return { type: 'realtime' };
  const type = graph.type[edge];
  const aux = graph.aux[edge];
  const aux2 = graph.aux2[edge];
  const keyOf = (write: number) => writes.keys[writes.key.get(write)];
  switch (type) {
    case WW:
      return { type: 'ww', key: keyOf(aux), value: writes.values[aux], next: writes.values[aux2] };
    case FCW:
      return {
        type: 'ww',
        key: keyOf(aux),
        value: writes.values[aux],
        next: writes.values[aux2],
        firstCommitterWins: true,
      };
    case WR:
      return { type: 'wr', key: keyOf(aux), value: writes.values[aux] };
    case RW:
      return {
        type: 'rw',
        key: keyOf(aux2),
        read: aux < 0 ? null : writes.values[aux],
        value: writes.values[aux2],
      };
    case PROCESS:
      return { type: 'process', process: table.process[from] };
    default:
      throw new Error(`dependency graph: unknown edge type ${type}`);
  }
}

function sentence(edge: DependencyEdge, a: string, b: string, wording: Wording): string {
  const { wrote } = wording;
  switch (edge.type) {
    case 'ww':
      if (edge.firstCommitterWins === true)
        return `${a} ${wrote} ${showScalar(edge.value)} to key ${showScalar(edge.key)} before ${b} ${wrote} ${showScalar(edge.next)} to it: ${a} did not see ${b}'s writes, and two transactions that wrote one key cannot both miss each other (first committer wins: ww)`;
      return wrote === 'appended'
        ? `${a} appended ${showScalar(edge.value)} to key ${showScalar(edge.key)} and ${b} appended ${showScalar(edge.next)} next (ww)`
        : `${a} wrote ${showScalar(edge.value)} to key ${showScalar(edge.key)}, which ${b} overwrote with ${showScalar(edge.next)} (ww)`;
    case 'wr':
      return `${a} ${wrote} ${showScalar(edge.value)} to key ${showScalar(edge.key)}, which ${b} read (wr)`;
    case 'rw':
      return wrote === 'appended'
        ? `${a} read key ${showScalar(edge.key)} without ${showScalar(edge.value)}, which ${b} appended (rw)`
        : `${a} read key ${showScalar(edge.key)} = ${showScalar(edge.read)}, which ${b} overwrote with ${showScalar(edge.value)} (rw)`;
    case 'process':
      return `${a} ran before ${b} on process ${String(edge.process)} (process)`;
    case 'realtime':
      return `${a} completed before ${b} was invoked (realtime)`;
  }
}

/** A found cycle as the ops and edges that form it, with one line saying why it cannot be. */
export function explainCycle<T extends TxnOpInput>(
  cycle: FoundCycle,
  graph: DependencyGraph,
  table: TxnTable<T>,
  writes: WriteTable,
  wording: Wording,
): CycleAnomaly<T> {
  const { nodes, edges } = cycle;
  const steps = nodes.map((txn, i) => ({
    op: table.ops[txn],
    edge: edgeOf(graph, table, writes, txn, edges[i]),
  }));
  const names = nodes.map((txn) => txnName(table, txn));
  const sentences = steps.map((step, i) =>
    sentence(step.edge, names[i], names[(i + 1) % names.length], wording),
  );
  return {
    type: cycle.type,
    cycle: steps,
    explanation: `${cycle.type}: ${sentences.join('; ')}; so ${names[0]} would have to come before itself.`,
  };
}

/** Edge type bits as names, for tests and messages. */
export const EDGE_NAMES: Readonly<Record<number, string>> = {
  [WW]: 'ww',
  [FCW]: 'ww (first committer wins)',
  [WR]: 'wr',
  [RW]: 'rw',
  [PROCESS]: 'process',
  [REALTIME]: 'realtime',
};
