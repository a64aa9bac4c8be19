import type { Event } from '../core/event.js';
import type { Window } from '../timeline/window.js';

/**
 * The event pairs the abstractions and the coverage metrics are built from.
 *
 * Internal events are the system's own (sources `probe` and `log`), not messages (a `send`/`recv`
 * with `attrs.msg`), not network, client or nemesis events — as in the artifact, whose pairs are
 * built from instrumented function/block executions only.
 *
 * Intra-node pairs follow the artifact (mediator `LayeredChangeAwareSet::insert`): when an event b
 * occurs on a node, the pair (a, b) is added for every type a seen earlier on that node in the
 * window — all ordered pairs, not only consecutive ones; (a, a) when a repeats.
 *
 * One difference: pairs are formed per (node, source). A node's probe file and its log are two
 * streams whose events are stamped differently (probes when emitted, log lines when read, up to a
 * poll period later), so their interleaving is noise; the artifact had one stream per node. For a
 * system observed through one source only, this is exactly the artifact's definition.
 */
export function isInternal(e: Event): boolean {
  if (e.source !== 'probe' && e.source !== 'log') return false;
  return !((e.type === 'send' || e.type === 'recv') && e.attrs?.msg !== undefined);
}

export const PAIR_SEPARATOR = ' > ';

/** `label(e)` prefixes each side (e.g. a role); by default nothing, i.e. node identity dropped. */
export type Labeler = (e: Event) => string;

interface NodeSeen {
  readonly types: Set<string>;
  /** Bumped whenever `types` grows. */
  version: number;
  /** For each type, the version of `types` when it was last paired with all of them. */
  readonly pairedAt: Map<string, number>;
}

/** All ordered intra-node pairs of internal events in the window, node ids dropped. */
export function intraPairs(events: readonly Event[], out: Set<string>, label?: Labeler): Set<string> {
  const nodes = new Map<string, NodeSeen>();
  for (const e of events) {
    if (!isInternal(e)) continue;
    const stream = e.source + '\u0000' + e.node;
    let seen = nodes.get(stream);
    if (!seen) {
      seen = { types: new Set(), version: 0, pairedAt: new Map() };
      nodes.set(stream, seen);
    }
    const b = label ? label(e) + e.type : e.type;
    // The artifact's shortcut: if nothing new was seen since b last paired, no new pair can form.
    if (seen.pairedAt.get(b) !== seen.version) {
      for (const a of seen.types) out.add(a + PAIR_SEPARATOR + b);
      seen.pairedAt.set(b, seen.version);
    }
    if (!seen.types.has(b)) {
      seen.types.add(b);
      seen.version++;
    }
  }
  return out;
}

/**
 * Cross-node causal pairs: for each happens-before edge from X to Y (X ≠ Y), the last internal event
 * on X before the send and the first internal event on Y after the receive, within the window
 * (`^` when X had none before the send, `$` when Y had none after the receive); for probe edges only
 * probe events are used (their stamps are exact; log lines are stamped when read). A message kind
 * (`attrs.kind` on the send, e.g. `append`) is kept in the pair: `a >append> b`.
 */
export function crossPairs(window: Window, out: Set<string>, label?: Labeler): Set<string> {
  const edges = window.edges ?? [];
  if (edges.length === 0) return out;
  const byNode = new Map<string, Event[]>();
  const probesByNode = new Map<string, Event[]>();
  const push = (m: Map<string, Event[]>, e: Event): void => {
    const list = m.get(e.node);
    if (list) list.push(e);
    else m.set(e.node, [e]);
  };
  for (const e of window.events) {
    if (!isInternal(e)) continue;
    push(byNode, e);
    if (e.source === 'probe') push(probesByNode, e);
  }
  for (const { send, recv } of edges) {
    if (send.node === recv.node) continue;
    const streams = send.source === 'probe' ? probesByNode : byNode;
    const before = lastBefore(streams.get(send.node), send.ts);
    const after = firstAfter(streams.get(recv.node), recv.ts);
    const a = before ? (label ? label(before) : '') + before.type : '^';
    const b = after ? (label ? label(after) : '') + after.type : '$';
    const kind = send.attrs?.kind;
    out.add(a + (typeof kind === 'string' ? ` >${kind}> ` : PAIR_SEPARATOR) + b);
  }
  return out;
}

/** The last event with ts ≤ at (events sorted by ts). */
function lastBefore(events: readonly Event[] | undefined, at: number): Event | undefined {
  if (!events) return undefined;
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid].ts <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? events[lo - 1] : undefined;
}

/** The first event with ts ≥ at. */
function firstAfter(events: readonly Event[] | undefined, at: number): Event | undefined {
  if (!events) return undefined;
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid].ts < at) lo = mid + 1;
    else hi = mid;
  }
  return events[lo];
}
