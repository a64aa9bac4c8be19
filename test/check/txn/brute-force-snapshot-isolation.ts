import type { Op } from '../../../src/core/op.js';

type MicroOps = readonly (readonly unknown[])[];

/**
 * Whether a list-append history is snapshot isolation, by trying everything (a handful of
 * transactions only): some total order of the committed transactions' commits, and for each a
 * snapshot — the transactions committed before some point no later than its own commit — such that
 * every read sees exactly its snapshot's appends (in commit order) and then its own earlier ones,
 * and no two transactions that append to one key overlap (one commits before the other's snapshot:
 * first committer wins). This is Adya's PL-SI / Cerone et al.'s SI without real time. Only `ok`
 * transactions count; failed ones are ignored, and there must be no `info`.
 */
export function bruteForceSnapshotIsolation(ops: readonly Op[]): boolean {
  const txns = ops.filter((op) => op.type === 'ok').map((op) => op.value as MicroOps);
  const writesOf = txns.map((t) => new Set(t.filter((m) => m[0] === 'append').map((m) => m[1])));
  const conflict = (a: number, b: number): boolean => [...writesOf[a]].some((k) => writesOf[b].has(k));
  return permutations(txns.length).some((order) => {
    const position = new Array<number>(txns.length);
    order.forEach((t, p) => (position[t] = p));
    return order.every((t, p) => {
      // Its snapshot must hold every earlier-committed transaction that appends to a key it appends to.
      let lowest = 0;
      for (let q = 0; q < p; q++) if (conflict(t, order[q])) lowest = q + 1;
      for (let start = lowest; start <= p; start++) if (readsMatch(txns, order, t, start)) return true;
      return false;
    });
  });
}

/** Whether every read of `t` sees the appends of `order[0..start)` to its key, then its own. */
function readsMatch(txns: readonly MicroOps[], order: readonly number[], t: number, start: number): boolean {
  const lists = new Map<unknown, unknown[]>();
  for (let q = 0; q < start; q++)
    for (const [f, k, v] of txns[order[q]]) if (f === 'append') lists.set(k, [...(lists.get(k) ?? []), v]);
  for (const [f, k, v] of txns[t]) {
    const list = lists.get(k) ?? [];
    if (f === 'append') lists.set(k, [...list, v]);
    else {
      const read = (v as readonly unknown[] | null) ?? [];
      if (read.length !== list.length || read.some((x, i) => x !== list[i])) return false;
    }
  }
  return true;
}

function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) =>
    Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]),
  );
}
