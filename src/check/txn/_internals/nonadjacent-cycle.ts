import { type DependencyGraph, DATA_EDGES, RW } from './dependency-graph.js';

/**
 * Finds a cycle of data edges (ww, wr, rw) that has an rw edge and no two rw edges in a row, going
 * round (Elle's G-nonadjacent, or a G-single): what snapshot isolation forbids. A history is
 * snapshot isolation exactly when `(ww ∪ wr) ; rw?` has no cycle (Cerone & Gotsman, "Analysing
 * Snapshot Isolation", PODC 2016, without session order, as Elle's plain snapshot isolation).
 *
 * The search runs on the graph doubled: each transaction once as "entered by ww or wr (or not
 * entered yet)" and once as "entered by rw". A ww or wr edge leads to the first copy from either;
 * an rw edge only from the first copy to the second. A cycle of the doubled graph through an rw
 * edge is such a cycle of the history, and one exists when some rw edge joins two copies of one
 * strongly connected component of the doubled graph (linear: Tarjan, then one breadth-first
 * search). The cycle found may pass through a transaction twice, once as each copy: it is still a
 * cycle of the relation above, so the history is still not snapshot isolation.
 */
export class NonadjacentSearch {
  private seen: Int32Array | undefined;
  private order: Int32Array | undefined;
  private low: Int32Array | undefined;
  private cursor: Int32Array | undefined;
  private stack: Int32Array | undefined;
  private calls: Int32Array | undefined;
  private onStack: Int32Array | undefined;
  private component: Int32Array | undefined;
  private parentEdge: Int32Array | undefined;
  private parentNode: Int32Array | undefined;
  private queue: Int32Array | undefined;
  private visited: Int32Array | undefined;
  private run = 0;
  private nextComponent = 0;

  constructor(private readonly graph: DependencyGraph) {}

  /**
   * A cycle among the nodes `scc` (those with `member[v] === tag`) as its edges, the first an rw
   * edge, or undefined when there is none.
   */
  cycle(scc: ArrayLike<number>, member: Int32Array, tag: number): number[] | undefined {
    const g = this.graph;
    let hasRw = false;
    for (let i = 0; i < scc.length && !hasRw; i++) {
      const u = scc[i];
      for (let e = g.offsets[u]; e < g.offsets[u + 1]; e++)
        if (g.type[e] === RW && member[g.to[e]] === tag) {
          hasRw = true;
          break;
        }
    }
    if (!hasRw) return undefined;
    const reached = this.components(scc, member, tag);
    const component = this.component!;
    const seen = this.seen!;
    for (let i = 0; i < scc.length; i++) {
      const u = scc[i];
      const from = 2 * u;
      if (seen[from] !== reached) continue;
      for (let e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
        const w = g.to[e];
        if (g.type[e] !== RW || member[w] !== tag) continue;
        const to = 2 * w + 1;
        if (seen[to] !== reached || component[to] !== component[from]) continue;
        const back = this.path(to, from, component[from], member, tag);
        if (back !== undefined) return [e, ...back];
      }
    }
    return undefined;
  }

  private scratch(): void {
    if (this.seen !== undefined) return;
    const size = 2 * this.graph.n;
    this.seen = new Int32Array(size);
    this.order = new Int32Array(size);
    this.low = new Int32Array(size);
    this.cursor = new Int32Array(size);
    this.stack = new Int32Array(size);
    this.calls = new Int32Array(size);
    this.onStack = new Int32Array(size);
    this.component = new Int32Array(size);
    this.parentEdge = new Int32Array(size);
    this.parentNode = new Int32Array(size);
    this.queue = new Int32Array(size);
    this.visited = new Int32Array(size);
  }

  /** The doubled node an edge `e` leads to from doubled node `x`, or -1 when it leads nowhere. */
  private step(x: number, e: number, member: Int32Array, tag: number): number {
    const g = this.graph;
    const w = g.to[e];
    if (member[w] !== tag || (g.type[e] & DATA_EDGES) === 0) return -1;
    if (g.type[e] !== RW) return 2 * w;
    return (x & 1) === 0 ? 2 * w + 1 : -1;
  }

  /**
   * Iterative Tarjan over both copies of the nodes `scc`: sets `component` of each node reached and
   * marks it in `seen` with the number returned.
   */
  private components(scc: ArrayLike<number>, member: Int32Array, tag: number): number {
    this.scratch();
    const run = ++this.run;
    const g = this.graph;
    const seen = this.seen!;
    const order = this.order!;
    const low = this.low!;
    const cursor = this.cursor!;
    const stack = this.stack!;
    const calls = this.calls!;
    const onStack = this.onStack!;
    const component = this.component!;
    let counter = 0;
    let stackTop = 0;
    for (let r = 0; r < 2 * scc.length; r++) {
      const root = 2 * scc[r >> 1] + (r & 1);
      if (seen[root] === run) continue;
      seen[root] = run;
      order[root] = low[root] = counter++;
      cursor[root] = g.offsets[root >> 1];
      stack[stackTop++] = root;
      onStack[root] = run;
      calls[0] = root;
      let depth = 1;
      while (depth > 0) {
        const x = calls[depth - 1];
        const end = g.offsets[(x >> 1) + 1];
        let descended = false;
        while (cursor[x] < end) {
          const y = this.step(x, cursor[x]++, member, tag);
          if (y < 0) continue;
          if (seen[y] !== run) {
            seen[y] = run;
            order[y] = low[y] = counter++;
            cursor[y] = g.offsets[y >> 1];
            stack[stackTop++] = y;
            onStack[y] = run;
            calls[depth++] = y;
            descended = true;
            break;
          }
          if (onStack[y] === run && order[y] < low[x]) low[x] = order[y];
        }
        if (descended) continue;
        depth--;
        if (depth > 0) {
          const parent = calls[depth - 1];
          if (low[x] < low[parent]) low[parent] = low[x];
        }
        if (low[x] !== order[x]) continue;
        const id = this.nextComponent++;
        let start = stackTop - 1;
        while (stack[start] !== x) start--;
        for (let i = start; i < stackTop; i++) {
          onStack[stack[i]] = 0;
          component[stack[i]] = id;
        }
        stackTop = start;
      }
    }
    return run;
  }

  /** The shortest path of doubled nodes from `from` to `to` within one component, as its edges. */
  private path(
    from: number,
    to: number,
    within: number,
    member: Int32Array,
    tag: number,
  ): number[] | undefined {
    const g = this.graph;
    const run = ++this.run;
    const seen = this.visited!;
    const component = this.component!;
    const parentEdge = this.parentEdge!;
    const parentNode = this.parentNode!;
    const queue = this.queue!;
    let head = 0;
    let tail = 0;
    queue[tail++] = from;
    seen[from] = run;
    while (head < tail) {
      const x = queue[head++];
      for (let e = g.offsets[x >> 1]; e < g.offsets[(x >> 1) + 1]; e++) {
        const y = this.step(x, e, member, tag);
        if (y < 0 || seen[y] === run || component[y] !== within) continue;
        seen[y] = run;
        parentEdge[y] = e;
        parentNode[y] = x;
        if (y === to) {
          const edges: number[] = [];
          for (let v = to; v !== from; v = parentNode[v]) edges.push(parentEdge[v]);
          return edges.reverse();
        }
        queue[tail++] = y;
      }
    }
    return undefined;
  }
}
