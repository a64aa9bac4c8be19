import { type Op, pairOps } from '../core/op.js';
import type { RegisterAnomaly } from './explain-register.js';

/**
 * What a system declares a change of leader may cost: replication that acknowledges a write before
 * any replica has it (Redis with Sentinel, a primary and asynchronous replicas) loses the writes the
 * old leader acknowledged and the promoted node had not received. `events` are the types of the
 * system's parsed log events (`SystemAdapter.parseLog`) by which a node says the leader changed;
 * `why` says where the system documents the loss.
 */
export interface FailoverLoss {
  readonly events: readonly string[];
  readonly why: string;
}

/** A leader change the run saw: a declared log event, at ns since the run started (history time). */
export interface LeaderChange {
  readonly timeNs: number;
  readonly node: string;
  readonly type: string;
}

/** A violating key, as the register explanation says it (see `explainRegisterResult`). */
export interface ExplainedKey {
  readonly key?: string | number | bigint;
  readonly anomaly: RegisterAnomaly;
  /** History indices of the ops it cites. */
  readonly ops: readonly number[];
}

/** The anomalies a write lost across a failover shows as: the write gone, or an older value read. */
const FAILOVER_ANOMALIES: ReadonlySet<RegisterAnomaly> = new Set(['lost-write', 'stale-read', 'resurrected']);

export interface FailoverVerdict {
  /** Per violating key: the span of its cited ops (history ns) and the leader changes within it. */
  readonly keys: readonly {
    readonly key?: string | number | bigint;
    readonly anomaly: RegisterAnomaly;
    readonly fromNs: number;
    readonly toNs: number;
    readonly changes: readonly LeaderChange[];
  }[];
}

/**
 * Whether every violating key is a loss a declared failover explains: its anomaly is lost data
 * (`lost-write`, `stale-read`, `resurrected`), and the leader changed (a declared event) between
 * the invocation of the first op its explanation cites and the completion of the last — the write
 * was acknowledged by a leader that the read no longer reached. Undefined when any key is not:
 * another anomaly, no change in its span, or a cited op that never completed (its span is open).
 * No keys: undefined (nothing to allow).
 */
export function judgeFailoverLoss(
  explained: readonly ExplainedKey[],
  ops: readonly Op[],
  changes: readonly LeaderChange[],
): FailoverVerdict | undefined {
  if (explained.length === 0) return undefined;
  const pairOf = new Map<number, { invoke: Op; completion: Op | undefined }>();
  for (const pair of pairOps(ops)) {
    pairOf.set(pair.invoke.index, pair);
    if (pair.completion !== undefined) pairOf.set(pair.completion.index, pair);
  }
  const keys: FailoverVerdict['keys'][number][] = [];
  for (const e of explained) {
    if (!FAILOVER_ANOMALIES.has(e.anomaly) || e.ops.length === 0) return undefined;
    const cited = e.ops.map((index) => pairOf.get(index));
    if (cited.some((p) => p?.completion === undefined || p.completion.type !== 'ok')) return undefined;
    const fromNs = Math.min(...cited.map((p) => p?.invoke.time ?? Infinity));
    const toNs = Math.max(...cited.map((p) => p?.completion?.time ?? Infinity));
    const within = changes.filter((c) => c.timeNs >= fromNs && c.timeNs <= toNs);
    if (within.length === 0) return undefined;
    keys.push({
      ...(e.key !== undefined ? { key: e.key } : {}),
      anomaly: e.anomaly,
      fromNs,
      toNs,
      changes: within,
    });
  }
  return { keys };
}
