import type { AnomalyMap, AnomalyType } from './anomaly.js';
import type { ConsistencyModel } from './consistency-model.js';
import type { TxnOpInput } from './txn-op.js';

export interface TxnCheckOptions {
  /** The model the verdict is about; the anomalies found are reported whatever it is. */
  readonly model: ConsistencyModel;
  /**
   * Order a transaction that completed before another was invoked before it (realtime edges),
   * to find `-realtime` cycles. Default: only for `strict-serializable`, which needs them.
   */
  readonly realtime?: boolean;
  /**
   * Order each process's transactions (process edges), to find `-process` cycles: what
   * strong-session models forbid. Default: false (realtime edges already include them).
   */
  readonly process?: boolean;
}

export interface TxnCheckResult<T = TxnOpInput> {
  /** No anomaly the model forbids was found. */
  readonly valid: boolean;
  readonly model: ConsistencyModel;
  /** The types of the anomalies found, sorted. */
  readonly anomalyTypes: readonly AnomalyType[];
  readonly anomalies: AnomalyMap<T>;
  /** The weakest models the anomalies rule out (every stronger one is ruled out too). */
  readonly ruledOut: readonly ConsistencyModel[];
  /**
   * Models nothing found rules out. Strict serializability is listed only when realtime edges
   * were searched.
   */
  readonly notRuledOut: readonly ConsistencyModel[];
  /** Transactions read: committed, failed and indeterminate. */
  readonly txns: number;
  readonly elapsedMs: number;
}
