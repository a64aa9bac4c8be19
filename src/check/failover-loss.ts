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
  /**
   * How the system's log shows two leaders at once (a split brain): a node leads on its own data
   * from a `promoted` event (on the promoted node), or a `started` event whose `role` attribute is
   * `leader`, until a `converged` event says it took the current leader's data. Two nodes doing
   * so at once, at least one of them promoted, is a split brain; a node starting as leader is no
   * change of leader by itself.
   */
  readonly splitBrain?: {
    readonly promoted: string;
    readonly started: string;
    readonly converged: readonly string[];
  };
}

/**
 * A leader change, or a role event of a declared split brain, the run saw: a declared log event,
 * at ns since the run started (history time).
 */
export interface LeaderChange {
  readonly timeNs: number;
  readonly node: string;
  readonly type: string;
  /** The role a `splitBrain.started` event says the node started in. */
  readonly role?: string;
}

/**
 * Two nodes that led on their own data at once, from `fromNs` to `toNs` (history time; Infinity:
 * until the run ended): `old` began leading first, `promoted` after it.
 */
export interface SplitBrain {
  readonly old: string;
  readonly promoted: string;
  readonly fromNs: number;
  readonly toNs: number;
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
    /** Set when no change fell in its span but its ops overlapped a split brain. */
    readonly splitBrain?: SplitBrain;
  }[];
}

/**
 * Whether every violating key is a loss a declared failover explains: its anomaly is lost data
 * (`lost-write`, `stale-read`, `resurrected`), and the leader changed (a declared event) between
 * the invocation of the first op its explanation cites and the completion of the last — the write
 * was acknowledged by a leader that the read no longer reached. Undefined when any key is not:
 * another anomaly, no change in its span, or a cited op that never completed (its span is open).
 * A key with no change in its span is still allowed when the system declares a split brain
 * (`FailoverLoss.splitBrain`, `splitBrains`) and one of its cited ops was served by the old of two
 * nodes leading at once, while they did: the old leader's writes, and what its reads saw, are lost
 * when it takes the promoted one's data. An op served only by the promoted node is no split brain. No keys: undefined (nothing to allow).
 */
export function judgeFailoverLoss(
  explained: readonly ExplainedKey[],
  ops: readonly Op[],
  changes: readonly LeaderChange[],
  declared?: FailoverLoss,
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
    const within = changes.filter(
      (c) =>
        (declared === undefined || declared.events.includes(c.type)) &&
        c.timeNs >= fromNs &&
        c.timeNs <= toNs,
    );
    const brain =
      within.length === 0 && declared?.splitBrain !== undefined
        ? splitBrains(changes, declared).find((b) =>
            cited.some(
              (p) =>
                p !== undefined &&
                p.invoke.node !== undefined &&
                p.invoke.node === b.old &&
                p.invoke.time <= b.toNs &&
                (p.completion?.time ?? Infinity) >= b.fromNs,
            ),
          )
        : undefined;
    if (within.length === 0 && brain === undefined) return undefined;
    keys.push({
      ...(e.key !== undefined ? { key: e.key } : {}),
      anomaly: e.anomaly,
      fromNs,
      toNs,
      changes: within,
      ...(brain !== undefined ? { splitBrain: brain } : {}),
    });
  }
  return { keys };
}

/**
 * The split brains the run's role events show (`FailoverLoss.splitBrain`): each node leads on its
 * own data from a promotion or a start as leader until it converges (or the run ends); two such
 * spans of different nodes that overlap, one of them begun by a promotion, are a split brain over
 * their overlap.
 */
export function splitBrains(changes: readonly LeaderChange[], declared: FailoverLoss): SplitBrain[] {
  const sb = declared.splitBrain;
  if (sb === undefined) return [];
  const spans: { node: string; fromNs: number; toNs: number; promoted: boolean }[] = [];
  const open = new Map<string, { fromNs: number; promoted: boolean }>();
  for (const c of [...changes].sort((a, b) => a.timeNs - b.timeNs)) {
    const promoted = c.type === sb.promoted;
    if (promoted || (c.type === sb.started && c.role === 'leader')) {
      if (!open.has(c.node)) open.set(c.node, { fromNs: c.timeNs, promoted });
      else if (promoted) open.set(c.node, { ...(open.get(c.node) ?? { fromNs: c.timeNs }), promoted });
    } else if (sb.converged.includes(c.type)) {
      const o = open.get(c.node);
      if (o !== undefined) spans.push({ node: c.node, toNs: c.timeNs, ...o });
      open.delete(c.node);
    }
  }
  for (const [node, o] of open) spans.push({ node, fromNs: o.fromNs, toNs: Infinity, promoted: o.promoted });
  const brains: SplitBrain[] = [];
  for (const [i, a] of spans.entries())
    for (const b of spans.slice(i + 1)) {
      if (a.node === b.node) continue;
      const fromNs = Math.max(a.fromNs, b.fromNs);
      const toNs = Math.min(a.toNs, b.toNs);
      if (fromNs > toNs) continue;
      // The later leader was promoted over the earlier one; begun together, either may be the old.
      if (a.fromNs <= b.fromNs && b.promoted) brains.push({ old: a.node, promoted: b.node, fromNs, toNs });
      if (b.fromNs <= a.fromNs && a.promoted) brains.push({ old: b.node, promoted: a.node, fromNs, toNs });
    }
  return brains;
}
