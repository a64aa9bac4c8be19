import type { Op } from '../../core/op.js';
import type { Anomaly, DependencyEdge } from './anomaly.js';
import type { ConsistencyModel } from './consistency-model.js';
import type { TxnCheckResult } from './txn-check-result.js';
import type { TxnScalar } from './txn-op.js';
import { type ReportScalar, reportScalar, showScalar } from './_internals/scalar.js';

/** A transaction an anomaly involves: the op that reports it (its completion, else its invoke). */
export interface TxnRef {
  /** `T` and the op's index, as explanations name it. */
  readonly name: string;
  readonly index: number;
  readonly process: Op['process'];
  readonly type: Op['type'];
  readonly f: string;
  readonly value: unknown;
  readonly node?: string;
  /** The line of the file the op is on, when read from a file. */
  readonly line?: number;
}

/** An edge whose keys and values are ReportScalars. */
export type ReportEdge<E = DependencyEdge> = E extends unknown
  ? { readonly [K in keyof E]: TxnScalar extends E[K] ? Exclude<E[K], TxnScalar> | ReportScalar : E[K] }
  : never;

/** One edge of a cycle, from a transaction to the next (by op index). */
export type EdgeRef = ReportEdge & { readonly from: number; readonly to: number };

/** One anomaly in a shape that is the same for every type. */
export interface AnomalyReport {
  readonly type: Anomaly['type'];
  readonly explanation: string;
  /** The key it is about; absent for cycles, which may span keys (their edges name them). */
  readonly key?: ReportScalar;
  readonly txns: readonly TxnRef[];
  /** A cycle's edges in order, the last leading back to the first transaction; empty otherwise. */
  readonly edges: readonly EdgeRef[];
}

/** A transactional check as `mallory check --json` prints it. */
export interface TxnReport {
  readonly valid: boolean;
  /** The checker: list-append or rw-register. */
  readonly model: string;
  /** The consistency model the verdict is about. */
  readonly consistency: ConsistencyModel;
  readonly txns: number;
  readonly elapsedMs: number;
  readonly anomalyTypes: readonly Anomaly['type'][];
  readonly anomalies: readonly AnomalyReport[];
  /** The weakest models the anomalies rule out: every stronger model is ruled out too. */
  readonly ruledOut: readonly ConsistencyModel[];
  readonly notRuledOut: readonly ConsistencyModel[];
}

function involved(anomaly: Anomaly<Op>): readonly Op[] {
  switch (anomaly.type) {
    case 'G1a':
    case 'G1b':
    case 'garbage-read':
    case 'future-read':
      return anomaly.writer === undefined ? [anomaly.op] : [anomaly.op, anomaly.writer];
    case 'internal':
    case 'duplicate-elements':
      return [anomaly.op];
    case 'incompatible-order':
    case 'lost-update':
      return anomaly.ops;
    case 'dirty-update':
      return [anomaly.writer, anomaly.nextWriter];
    default:
      return anomaly.cycle.map((step) => step.op);
  }
}

/** An edge with its keys and values as a report holds them. */
function edgeJson(edge: DependencyEdge): ReportEdge {
  switch (edge.type) {
    case 'ww':
      return {
        ...edge,
        key: reportScalar(edge.key),
        value: reportScalar(edge.value),
        next: reportScalar(edge.next),
      };
    case 'wr':
      return { ...edge, key: reportScalar(edge.key), value: reportScalar(edge.value) };
    case 'rw':
      return {
        ...edge,
        key: reportScalar(edge.key),
        read: edge.read === null ? null : reportScalar(edge.read),
        value: reportScalar(edge.value),
      };
    default:
      return edge;
  }
}

function edgesOf(anomaly: Anomaly<Op>): readonly EdgeRef[] {
  if (!('cycle' in anomaly)) return [];
  const { cycle } = anomaly;
  return cycle.map((step, i) => ({
    from: step.op.index,
    to: cycle[(i + 1) % cycle.length].op.index,
    ...edgeJson(step.edge),
  }));
}

/**
 * A transactional checker's result as one flat document: every anomaly with the transactions it
 * involves (with their lines when `lineOf` knows them) and, for cycles, the edges.
 */
export function txnReport(
  checker: string,
  result: TxnCheckResult<Op>,
  lineOf: (op: Op) => number | undefined = () => undefined,
): TxnReport {
  const ref = (op: Op): TxnRef => {
    const line = lineOf(op);
    return {
      name: `T${op.index}`,
      index: op.index,
      process: op.process,
      type: op.type,
      f: op.f,
      value: op.value,
      ...(op.node === undefined ? {} : { node: op.node }),
      ...(line === undefined ? {} : { line }),
    };
  };
  const anomalies = result.anomalyTypes.flatMap((type) =>
    (result.anomalies[type] ?? []).map((anomaly: Anomaly<Op>): AnomalyReport => ({
      type: anomaly.type,
      explanation: anomaly.explanation,
      ...('key' in anomaly ? { key: reportScalar(anomaly.key) } : {}),
      txns: involved(anomaly).map(ref),
      edges: edgesOf(anomaly),
    })),
  );
  return {
    valid: result.valid,
    model: checker,
    consistency: result.model,
    txns: result.txns,
    elapsedMs: result.elapsedMs,
    anomalyTypes: result.anomalyTypes,
    anomalies,
    ruledOut: result.ruledOut,
    notRuledOut: result.notRuledOut,
  };
}

/** An edge as it reads in a chain: `-rw "x"->`, naming the key and values where there are some. */
export function edgeLabel(edge: ReportEdge): string {
  switch (edge.type) {
    case 'ww':
    case 'wr':
    case 'rw':
      return `${edge.type} ${showScalar(edge.key)}`;
    case 'process':
      return `process ${String(edge.process)}`;
    case 'realtime':
      return 'realtime';
  }
}

/** A cycle as one line: `T3 -rw "x"-> T5 -wr "y"-> T3`. */
export function cycleLine(edges: readonly EdgeRef[]): string {
  if (edges.length === 0) return '';
  return `T${edges[0].from}${edges.map((edge) => ` -${edgeLabel(edge)}-> T${edge.to}`).join('')}`;
}
