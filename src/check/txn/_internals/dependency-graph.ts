import { IntList } from './int-list.js';

/** Edge types as bits, so a search can take any set of them as a mask. */
export const WW = 1;
export const WR = 2;
export const RW = 4;
export const PROCESS = 8;
export const REALTIME = 16;
/**
 * A write order snapshot isolation forces: two transactions wrote one key and one did not see the
 * other (an rw edge between them), so it committed first (first committer wins). Added only for
 * models that forbid G-single, under which the other order would be a G-single at once.
 */
export const FCW = 32;
export const DATA_EDGES = WW | WR | RW | FCW;
/** The edges that order two writes of one key. */
export const WRITE_ORDER = WW | FCW;

/**
 * A dependency graph over transactions 0..n-1 in compressed rows: the edges out of `v` are
 * `offsets[v]` to `offsets[v + 1]`. Each edge has a type bit and two integers that justify it
 * (write ids, see the checkers), -1 when unused. Realtime edges, the most numerous, carry nothing
 * and live in rows of their own.
 */
export interface DependencyGraph {
  readonly n: number;
  readonly offsets: Int32Array;
  readonly to: Int32Array;
  readonly type: Uint8Array;
  readonly aux: Int32Array;
  readonly aux2: Int32Array;
  readonly realtimeOffsets: Int32Array;
  readonly realtimeTo: Int32Array;
}

/** Collects edges in flat lists, then sorts them into rows once. */
export class GraphBuilder {
  private readonly from: IntList;
  private readonly to: IntList;
  private readonly types: IntList;
  private readonly aux: IntList;
  private readonly aux2: IntList;
  private readonly realtimeFrom: IntList;
  private readonly realtimeTo: IntList;

  /** `expectedEdges`: a guess that saves regrowing the lists (each regrowth copies them). */
  constructor(
    readonly n: number,
    expectedEdges = n,
  ) {
    this.from = new IntList(expectedEdges);
    this.to = new IntList(expectedEdges);
    this.types = new IntList(expectedEdges);
    this.aux = new IntList(expectedEdges);
    this.aux2 = new IntList(expectedEdges);
    this.realtimeFrom = new IntList(expectedEdges);
    this.realtimeTo = new IntList(expectedEdges);
  }

  add(from: number, to: number, type: number, aux = -1, aux2 = -1): void {
    if (from === to) return;
    this.from.push(from);
    this.to.push(to);
    this.types.push(type);
    this.aux.push(aux);
    this.aux2.push(aux2);
  }

  /** Calls `visit` with every data edge of type `type` added so far. */
  forEach(type: number, visit: (from: number, to: number, aux: number, aux2: number) => void): void {
    const count = this.from.length;
    for (let i = 0; i < count; i++)
      if (this.types.get(i) === type)
        visit(this.from.get(i), this.to.get(i), this.aux.get(i), this.aux2.get(i));
  }

  get realtimeCount(): number {
    return this.realtimeFrom.length;
  }

  realtimeSource(i: number): number {
    return this.realtimeFrom.get(i);
  }

  addRealtime(from: number, to: number): void {
    this.realtimeFrom.push(from);
    this.realtimeTo.push(to);
  }

  build(): DependencyGraph {
    const from = this.from.view();
    const order = rows(this.n, from);
    const to = this.to.view();
    const types = this.types.view();
    const aux = this.aux.view();
    const aux2 = this.aux2.view();
    const edges = from.length;
    const sortedTo = new Int32Array(edges);
    const sortedType = new Uint8Array(edges);
    const sortedAux = new Int32Array(edges);
    const sortedAux2 = new Int32Array(edges);
    for (let i = 0; i < edges; i++) {
      const at = order.slot[i];
      sortedTo[at] = to[i];
      sortedType[at] = types[i];
      sortedAux[at] = aux[i];
      sortedAux2[at] = aux2[i];
    }
    const realtime = rows(this.n, this.realtimeFrom.view());
    const realtimeFrom = this.realtimeTo.view();
    const realtimeTo = new Int32Array(realtimeFrom.length);
    for (let i = 0; i < realtimeFrom.length; i++) realtimeTo[realtime.slot[i]] = realtimeFrom[i];
    return {
      n: this.n,
      offsets: order.offsets,
      to: sortedTo,
      type: sortedType,
      aux: sortedAux,
      aux2: sortedAux2,
      realtimeOffsets: realtime.offsets,
      realtimeTo,
    };
  }
}

/** Counting sort by source: each edge's slot in its source's row, and the rows' offsets. */
function rows(n: number, from: Int32Array): { offsets: Int32Array; slot: Int32Array } {
  const offsets = new Int32Array(n + 1);
  for (const v of from) offsets[v + 1]++;
  for (let v = 0; v < n; v++) offsets[v + 1] += offsets[v];
  const next = offsets.slice(0, n);
  const slot = new Int32Array(from.length);
  for (let i = 0; i < from.length; i++) slot[i] = next[from[i]]++;
  return { offsets, slot };
}
