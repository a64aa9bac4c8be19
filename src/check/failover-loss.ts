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
   * so at once, at least one of them promoted, is a split brain; so are two that overlap otherwise
   * (a restart that found two primaries), once one of them converges while the other still leads.
   * A node starting as leader is no change of leader by itself.
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
    /**
     * Set when the key's history holds once the ops the old leader of `splitBrain` served while
     * it led on its own data are taken out (`SplitBrainHolds`): how many were taken out.
     */
    readonly oldLeaderOps?: number;
  }[];
}

/**
 * Per violating key (by `String(key)`), a split brain whose old leader's ops, taken out of the
 * key's history, leave a linearizable history, and how many ops that took out (see
 * `oldLeaderOpsIn`). The caller checks; this module only reads the answer.
 */
export type SplitBrainHolds = ReadonlyMap<string, { readonly brain: SplitBrain; readonly removed: number }>;

/**
 * The node that answered an op: the one its completion names (`Op.served`, when the client
 * followed the leader elsewhere), else the node its client was connected to.
 */
function servedBy(pair: { invoke: Op; completion: Op | undefined }): string | undefined {
  return pair.completion?.served ?? pair.invoke.node;
}

/**
 * The ops (invocations and their completions) the old leader of `brain` served while it led on its
 * own data: what a split brain's loser acknowledged or read is lost or stale when it takes the
 * other's data, so they say nothing about the register the cluster kept.
 */
export function oldLeaderOpsIn(ops: readonly Op[], brain: SplitBrain): Set<number> {
  const out = new Set<number>();
  for (const pair of pairOps(ops)) {
    const end = pair.completion?.time ?? Infinity;
    if (servedBy(pair) !== brain.old || pair.invoke.time > brain.toNs || end < brain.fromNs) continue;
    out.add(pair.invoke.index);
    if (pair.completion !== undefined) out.add(pair.completion.index);
  }
  return out;
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
 * when it takes the promoted one's data. An op served only by the promoted node is no split brain.
 * A key in `holds` (any anomaly, `unexplained` too) is allowed by its split brain: its history
 * holds once the old leader's ops of that split brain are taken out. No keys: undefined (nothing
 * to allow).
 */
export function judgeFailoverLoss(
  explained: readonly ExplainedKey[],
  ops: readonly Op[],
  changes: readonly LeaderChange[],
  declared?: FailoverLoss,
  holds: SplitBrainHolds = new Map(),
): FailoverVerdict | undefined {
  if (explained.length === 0) return undefined;
  const pairOf = new Map<number, { invoke: Op; completion: Op | undefined }>();
  for (const pair of pairOps(ops)) {
    pairOf.set(pair.invoke.index, pair);
    if (pair.completion !== undefined) pairOf.set(pair.completion.index, pair);
  }
  const keys: FailoverVerdict['keys'][number][] = [];
  for (const e of explained) {
    const held =
      e.key !== undefined && declared?.splitBrain !== undefined ? holds.get(String(e.key)) : undefined;
    if (held !== undefined) {
      keys.push({
        ...(e.key !== undefined ? { key: e.key } : {}),
        anomaly: e.anomaly,
        fromNs: held.brain.fromNs,
        toNs: held.brain.toNs,
        changes: [],
        splitBrain: held.brain,
        oldLeaderOps: held.removed,
      });
      continue;
    }
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
                servedBy(p) !== undefined &&
                servedBy(p) === b.old &&
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
 * A schedule's leader changes with the leader it was under: `leader` answered as leader at `atNs`
 * (history time; the schedule's first fault asks who leads) and led from then on, as far as the
 * schedule's own events tell — a leader promoted in an earlier schedule has no event in this one.
 * Without it a stale primary that came back beside that leader was no split brain: a redis replica
 * killed under disk-full restarted as a primary on its old data while Sentinel's primary was paused,
 * took writes, and gave them up when Sentinel made it a replica again. Nothing is added when the
 * system declares no split brain or no node answered.
 */
export function withLeaderAtStart(
  changes: readonly LeaderChange[],
  leader: string | undefined,
  atNs: number,
  declared: FailoverLoss,
): LeaderChange[] {
  const sb = declared.splitBrain;
  if (sb === undefined || leader === undefined) return [...changes];
  return [{ timeNs: atNs, node: leader, type: sb.started, role: 'leader' }, ...changes];
}

/**
 * The split brains the run's role events show (`FailoverLoss.splitBrain`): each node leads on its
 * own data from a promotion or a start as leader until it converges (or the run ends); two such
 * spans of different nodes that overlap, one of them begun by a promotion, are a split brain over
 * their overlap (the earlier is the old); so are two that overlap otherwise (both begun by starts,
 * or a promoted node restarted after the other started) once one of them converged while the other
 * still led: that one is the old, its data given up.
 */
export function splitBrains(changes: readonly LeaderChange[], declared: FailoverLoss): SplitBrain[] {
  const sb = declared.splitBrain;
  if (sb === undefined) return [];
  const spans: { node: string; fromNs: number; toNs: number; promoted: boolean; converged: boolean }[] = [];
  const open = new Map<string, { fromNs: number; promoted: boolean }>();
  for (const c of [...changes].sort((a, b) => a.timeNs - b.timeNs)) {
    const promoted = c.type === sb.promoted;
    if (promoted || (c.type === sb.started && c.role === 'leader')) {
      if (!open.has(c.node)) open.set(c.node, { fromNs: c.timeNs, promoted });
      else if (promoted) open.set(c.node, { ...(open.get(c.node) ?? { fromNs: c.timeNs }), promoted });
    } else if (sb.converged.includes(c.type)) {
      const o = open.get(c.node);
      if (o !== undefined) spans.push({ node: c.node, toNs: c.timeNs, converged: true, ...o });
      open.delete(c.node);
    }
  }
  for (const [node, o] of open)
    spans.push({ node, fromNs: o.fromNs, toNs: Infinity, promoted: o.promoted, converged: false });
  const brains: SplitBrain[] = [];
  for (const [i, a] of spans.entries())
    for (const b of spans.slice(i + 1)) {
      if (a.node === b.node) continue;
      const fromNs = Math.max(a.fromNs, b.fromNs);
      const toNs = Math.min(a.toNs, b.toNs);
      if (fromNs > toNs) continue;
      // The later leader was promoted over the earlier one; begun together, either may be the old.
      const before = brains.length;
      if (a.fromNs <= b.fromNs && b.promoted) brains.push({ old: a.node, promoted: b.node, fromNs, toNs });
      if (b.fromNs <= a.fromNs && a.promoted) brains.push({ old: b.node, promoted: a.node, fromNs, toNs });
      if (brains.length > before) continue;
      // Otherwise (both started as leaders, or the promoted one restarted after the other started:
      // a restart that found two primaries), the one that gave up its data first, by converging
      // while the other still led, is the old one.
      if (a.converged && a.toNs <= b.toNs) brains.push({ old: a.node, promoted: b.node, fromNs, toNs });
      else if (b.converged && b.toNs < a.toNs) brains.push({ old: b.node, promoted: a.node, fromNs, toNs });
    }
  return brains;
}
