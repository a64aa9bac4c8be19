import type { DependencyGraph } from './dependency-graph.js';
import { REALTIME } from './dependency-graph.js';

/**
 * Iterative Tarjan and breadth-first search over a DependencyGraph, restricted to an edge-type mask
 * and optionally to a set of nodes. Edges are named by one integer: a data edge by its index, a
 * realtime edge by `to.length` plus its index. Scratch arrays are sized to the graph once and told
 * apart between runs by stamps, so a search over a small part of a big graph costs only that part.
 */
export class GraphSearch {
  private readonly seen: Int32Array;
  private readonly onStack: Int32Array;
  private readonly order: Int32Array;
  private readonly low: Int32Array;
  private readonly cursor: Int32Array;
  private readonly stack: Int32Array;
  private readonly calls: Int32Array;
  private readonly parentEdge: Int32Array;
  private readonly queue: Int32Array;
  /** The component a node fell in during the latest Tarjan run that reached it (unique ids). */
  readonly component: Int32Array;
  /** `member[v] === tag` puts `v` in the set a restricted search may visit. */
  readonly member: Int32Array;
  private run = 0;
  /** Nodes the latest `path` visited. */
  visited = 0;
  private nextComponent = 0;
  private readonly dataEdges: number;

  constructor(private readonly graph: DependencyGraph) {
    const n = graph.n;
    this.seen = new Int32Array(n);
    this.onStack = new Int32Array(n);
    this.order = new Int32Array(n);
    this.low = new Int32Array(n);
    this.cursor = new Int32Array(n);
    this.stack = new Int32Array(n);
    this.calls = new Int32Array(n);
    this.parentEdge = new Int32Array(n);
    this.queue = new Int32Array(n);
    this.component = new Int32Array(n);
    this.member = new Int32Array(n);
    this.dataEdges = graph.to.length;
  }

  target(edge: number): number {
    return edge < this.dataEdges ? this.graph.to[edge] : this.graph.realtimeTo[edge - this.dataEdges];
  }

  edgeType(edge: number): number {
    return edge < this.dataEdges ? this.graph.type[edge] : REALTIME;
  }

  /** Edges out of `v`, data and realtime, whatever their type. */
  degree(v: number): number {
    const g = this.graph;
    return g.offsets[v + 1] - g.offsets[v] + g.realtimeOffsets[v + 1] - g.realtimeOffsets[v];
  }

  /** The `i`-th edge out of `v` (data edges first), or -1 when it is not in `mask`. */
  edgeAt(v: number, i: number, mask: number): number {
    const g = this.graph;
    const dataDegree = g.offsets[v + 1] - g.offsets[v];
    if (i < dataDegree) {
      const e = g.offsets[v] + i;
      return (g.type[e] & mask) === 0 ? -1 : e;
    }
    return (mask & REALTIME) === 0 ? -1 : this.dataEdges + g.realtimeOffsets[v] + i - dataDegree;
  }

  /**
   * Strongly connected components of the nodes `nodes` (restricted to `member === tag` unless tag
   * is undefined) under the edges in `mask`. Returns the components of two or more nodes; every
   * visited node's `component` is set.
   */
  components(nodes: ArrayLike<number>, mask: number, tag?: number): Int32Array[] {
    const run = ++this.run;
    const { seen, onStack, order, low, cursor, stack, calls, component, member } = this;
    const found: Int32Array[] = [];
    let counter = 0;
    let stackTop = 0;
    for (let r = 0; r < nodes.length; r++) {
      const root = nodes[r];
      if (seen[root] === run) continue;
      seen[root] = run;
      order[root] = low[root] = counter++;
      cursor[root] = 0;
      stack[stackTop++] = root;
      onStack[root] = run;
      calls[0] = root;
      let depth = 1;
      while (depth > 0) {
        const v = calls[depth - 1];
        const degree = this.degree(v);
        let descended = false;
        while (cursor[v] < degree) {
          const e = this.edgeAt(v, cursor[v]++, mask);
          if (e < 0) continue;
          const w = this.target(e);
          if (tag !== undefined && member[w] !== tag) continue;
          if (seen[w] !== run) {
            seen[w] = run;
            order[w] = low[w] = counter++;
            cursor[w] = 0;
            stack[stackTop++] = w;
            onStack[w] = run;
            calls[depth++] = w;
            descended = true;
            break;
          }
          if (onStack[w] === run && order[w] < low[v]) low[v] = order[w];
        }
        if (descended) continue;
        depth--;
        if (depth > 0) {
          const parent = calls[depth - 1];
          if (low[v] < low[parent]) low[parent] = low[v];
        }
        if (low[v] !== order[v]) continue;
        const id = this.nextComponent++;
        let start = stackTop - 1;
        while (stack[start] !== v) start--;
        for (let i = start; i < stackTop; i++) {
          onStack[stack[i]] = 0;
          component[stack[i]] = id;
        }
        if (stackTop - start > 1) found.push(stack.slice(start, stackTop));
        stackTop = start;
      }
    }
    return found;
  }

  /**
   * The shortest path from `from` to `to` under `mask` through nodes whose `component` is
   * `component` (or `member` is `tag`), as the edges taken; undefined when there is none or when
   * more than `budget` nodes would be visited.
   */
  path(
    from: number,
    to: number,
    mask: number,
    within: { readonly component: number } | { readonly tag: number },
    budget = Infinity,
  ): number[] | undefined {
    const run = ++this.run;
    const { seen, parentEdge, queue, component, member } = this;
    const inside = (w: number): boolean =>
      'component' in within ? component[w] === within.component : member[w] === within.tag;
    let head = 0;
    let tail = 0;
    queue[tail++] = from;
    seen[from] = run;
    parentEdge[from] = -1;
    this.visited = 0;
    while (head < tail) {
      if (head > budget) return undefined;
      this.visited = head + 1;
      const v = queue[head++];
      const degree = this.degree(v);
      for (let i = 0; i < degree; i++) {
        const e = this.edgeAt(v, i, mask);
        if (e < 0) continue;
        const w = this.target(e);
        if (seen[w] === run || !inside(w)) continue;
        seen[w] = run;
        parentEdge[w] = e;
        if (w === to) return this.edgesTo(from, to);
        queue[tail++] = w;
      }
    }
    return undefined;
  }

  private edgesTo(from: number, to: number): number[] {
    const edges: number[] = [];
    let v = to;
    while (v !== from) {
      const e = this.parentEdge[v];
      edges.push(e);
      v = this.source(e);
    }
    return edges.reverse();
  }

  /** The node an edge leaves: a binary search of the rows. */
  source(edge: number): number {
    const g = this.graph;
    const data = edge < this.dataEdges;
    const offsets = data ? g.offsets : g.realtimeOffsets;
    const at = data ? edge : edge - this.dataEdges;
    let lo = 0;
    let hi = g.n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (offsets[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
