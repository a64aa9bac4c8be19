import { FCW, type GraphBuilder, RW } from './dependency-graph.js';
import type { WriteTable } from './write-table.js';

/**
 * Adds, for every rw edge between two transactions that both wrote some key, the order of their
 * writes to that key which snapshot isolation forces: the reader, which did not see the other's
 * write, committed first (two transactions that wrote one key cannot both miss each other: first
 * committer wins). The other order would close a G-single with the rw edge at once, so a model
 * that forbids G-single may assume this one. Reads alone often leave such writes unordered (no
 * read shows both), and a lost update, a write skew on a key both wrote, or a long fork through
 * them would then pass.
 */
export function addFirstCommitterEdges(txns: number, writes: WriteTable, builder: GraphBuilder): void {
  const count = writes.txn.length;
  const offsets = new Int32Array(txns + 1);
  for (let w = 0; w < count; w++) offsets[writes.txn.get(w) + 1]++;
  for (let t = 0; t < txns; t++) offsets[t + 1] += offsets[t];
  const next = offsets.slice(0, txns);
  const byTxn = new Int32Array(count);
  for (let w = 0; w < count; w++) byTxn[next[writes.txn.get(w)]++] = w;
  const found: number[] = [];
  builder.forEach(RW, (from, to) => {
    for (let i = offsets[from]; i < offsets[from + 1]; i++) {
      const key = writes.key.get(byTxn[i]);
      for (let j = offsets[to]; j < offsets[to + 1]; j++)
        if (writes.key.get(byTxn[j]) === key) {
          found.push(from, to, byTxn[i], byTxn[j]);
          return;
        }
    }
  });
  for (let i = 0; i < found.length; i += 4)
    builder.add(found[i], found[i + 1], FCW, found[i + 2], found[i + 3]);
}
