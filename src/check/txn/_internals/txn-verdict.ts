import type { Anomaly, AnomalyType } from '../anomaly.js';
import {
  CONSISTENCY_MODELS,
  type ConsistencyModel,
  anomaliesForbiddenBy,
  isConsistencyModel,
  modelBoundary,
} from '../consistency-model.js';
import type { TxnCheckOptions, TxnCheckResult } from '../txn-check-result.js';

export interface ResolvedOptions {
  readonly model: ConsistencyModel;
  readonly realtime: boolean;
  readonly process: boolean;
}

/** Checks the options a caller gave; throws with a message saying what to pass instead. */
export function resolveOptions(checker: string, options: TxnCheckOptions): ResolvedOptions {
  const { model, realtime, process } = options;
  if (!isConsistencyModel(model))
    throw new TypeError(
      `${checker}: unknown consistency model ${JSON.stringify(model)}: use one of ${CONSISTENCY_MODELS.join(', ')}`,
    );
  return {
    model,
    realtime: realtime ?? model === 'strict-serializable',
    process: process ?? false,
  };
}

/** Collects anomalies by type, then weighs them against the model. */
export class AnomalyLog<T> {
  private readonly byType = new Map<AnomalyType, Anomaly<T>[]>();

  add(anomaly: Anomaly<T>): void {
    const list = this.byType.get(anomaly.type);
    if (list === undefined) this.byType.set(anomaly.type, [anomaly]);
    else list.push(anomaly);
  }

  verdict(options: ResolvedOptions, txns: number, startMs: number): TxnCheckResult<T> {
    const anomalyTypes = [...this.byType.keys()].sort();
    const forbidden = anomaliesForbiddenBy(options.model);
    const { ruledOut, notRuledOut } = modelBoundary(anomalyTypes);
    return {
      valid: !anomalyTypes.some((type) => forbidden.has(type)),
      model: options.model,
      anomalyTypes,
      anomalies: Object.fromEntries(this.byType),
      ruledOut,
      notRuledOut: options.realtime
        ? notRuledOut
        : notRuledOut.filter((model) => model !== 'strict-serializable'),
      txns,
      elapsedMs: performance.now() - startMs,
    };
  }
}
