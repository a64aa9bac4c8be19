import type { CycleAnomalyType, CycleBase } from '../anomaly.js';
import {
  DATA_EDGES,
  type DependencyGraph,
  FCW,
  PROCESS,
  REALTIME,
  RW,
  WR,
  WRITE_ORDER,
} from './dependency-graph.js';
import { GraphSearch } from './graph-search.js';
import { NonadjacentSearch } from './nonadjacent-cycle.js';

/** A cycle as the transactions in it and the edge out of each (the last leads to the first). */
export interface FoundCycle {
  readonly type: CycleAnomalyType;
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
}

/**
 * How many nodes a G-single search may visit beyond its component's size, per component: the
 * search for a path back from each rw edge is quadratic at worst, and past this budget the cycle
 * is reported as G2-item (still forbidden by serializability, only named less precisely).
 */
const G_SINGLE_BUDGET_PER_NODE = 16;
const G_SINGLE_BUDGET_MIN = 100_000;

export function classify(search: GraphSearch, edges: readonly number[]): CycleAnomalyType {
  let rw = 0;
  let wr = 0;
  let kinds = 0;
  let adjacentRw = false;
  for (let i = 0; i < edges.length; i++) {
    const type = search.edgeType(edges[i]);
    kinds |= type;
    if (type === RW) {
      rw++;
      if (search.edgeType(edges[(i + 1) % edges.length]) === RW) adjacentRw = true;
    } else if (type === WR) wr++;
  }
  // A write order snapshot isolation forced (FCW) stands for an rw edge whose other order would
  // be a G-single: such a cycle is at least a G-single, never a G0 or G1c (which would rule out
  // read committed, under which the order was not forced).
  const base: CycleBase =
    rw === 0 && (kinds & FCW) === 0
      ? wr === 0
        ? 'G0'
        : 'G1c'
      : rw <= 1
        ? 'G-single'
        : adjacentRw
          ? 'G2-item'
          : 'G-nonadjacent';
  if ((kinds & REALTIME) !== 0) return `${base}-realtime`;
  if ((kinds & PROCESS) !== 0) return `${base}-process`;
  return base;
}

/**
 * Finds cycles in the graph under the `enabled` edge types: the strongly connected components
 * first (linear), then within each component the shortest cycle of each kind it has, the worst
 * first: pure ww (G0), ww + wr (G1c), exactly one rw (G-single), rw edges never two in a row
 * (G-nonadjacent, when there is no G-single), any rw (G2-item); then again
 * with process edges and with realtime edges allowed, for the `-process` and `-realtime` variants.
 * Each kind is reported at most once per component.
 */
export function findCycles(graph: DependencyGraph, enabled: number): FoundCycle[] {
  const search = new GraphSearch(graph);
  const nonadjacent = new NonadjacentSearch(graph);
  const all = new Int32Array(graph.n);
  for (let v = 0; v < graph.n; v++) all[v] = v;
  const found: FoundCycle[] = [];
  const sccs = search.components(all, enabled);
  let tag = 0;
  for (const scc of sccs) {
    tag++;
    for (const v of scc) search.member[v] = tag;
    const kinds = new Set<CycleAnomalyType>();
    const keep = (edges: number[] | undefined): void => {
      if (edges === undefined) return;
      const type = classify(search, edges);
      if (kinds.has(type)) return;
      kinds.add(type);
      found.push({ type, nodes: edges.map((e) => search.source(e)), edges });
    };
    const variants = [0, enabled & PROCESS, enabled & REALTIME].filter((v, i) => i === 0 || v !== 0);
    for (const variant of variants) {
      const extra = variant === REALTIME ? REALTIME | (enabled & PROCESS) : variant;
      keep(cycleThrough(search, scc, tag, WRITE_ORDER | extra, variant || WRITE_ORDER));
      keep(cycleThrough(search, scc, tag, WRITE_ORDER | WR | extra, variant || WR));
      keep(singleRwCycle(search, graph, scc, tag, WRITE_ORDER | WR | extra));
      if (variant === 0 && !kinds.has('G-single')) keep(nonadjacent.cycle(scc, search.member, tag));
      keep(cycleThrough(search, scc, tag, DATA_EDGES | extra, variant || RW));
    }
  }
  return found;
}

/** The shortest cycle through the first edge of type `required` that lies on a cycle under `mask`. */
function cycleThrough(
  search: GraphSearch,
  scc: Int32Array,
  tag: number,
  mask: number,
  required: number,
): number[] | undefined {
  search.components(scc, mask, tag);
  for (const u of scc) {
    const component = search.component[u];
    const degree = search.degree(u);
    for (let i = 0; i < degree; i++) {
      const e = search.edgeAt(u, i, mask);
      if (e < 0 || (search.edgeType(e) & required) === 0) continue;
      const v = search.target(e);
      if (search.member[v] !== tag || search.component[v] !== component) continue;
      const back = search.path(v, u, mask, { component });
      if (back !== undefined) return [e, ...back];
    }
  }
  return undefined;
}

/** A cycle of one rw edge and a way back from its end under `mask` (which has no rw). */
function singleRwCycle(
  search: GraphSearch,
  graph: DependencyGraph,
  scc: Int32Array,
  tag: number,
  mask: number,
): number[] | undefined {
  search.components(scc, mask, tag);
  const rwEdges: number[] = [];
  for (const u of scc) {
    for (let e = graph.offsets[u]; e < graph.offsets[u + 1]; e++) {
      if (graph.type[e] !== RW || search.member[graph.to[e]] !== tag) continue;
      const v = graph.to[e];
      const component = search.component[u];
      if (search.component[v] === component) {
        const back = search.path(v, u, mask, { component });
        if (back !== undefined) return [e, ...back];
      }
      rwEdges.push(e);
    }
  }
  let budget = Math.max(G_SINGLE_BUDGET_MIN, G_SINGLE_BUDGET_PER_NODE * scc.length);
  for (const e of rwEdges) {
    if (budget <= 0) return undefined;
    const u = search.source(e);
    const back = search.path(graph.to[e], u, mask, { tag }, budget);
    budget -= search.visited;
    if (back !== undefined) return [e, ...back];
  }
  return undefined;
}
