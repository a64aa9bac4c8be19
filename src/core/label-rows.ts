/**
 * The row of each label so that none overlaps another (a greedy interval packing): labels in
 * order of their start, each in the first row whose last label ended at least `gap` before it.
 * `items` are `[from, to]` extents on one axis (e.g. px); the result is each item's row, in the
 * items' own order, from 0.
 */
export function labelRows(items: readonly (readonly [number, number])[], gap = 0): number[] {
  const order = items.map((_, i) => i).sort((a, b) => items[a][0] - items[b][0] || a - b);
  const rowEnds: number[] = [];
  const rows = new Array<number>(items.length).fill(0);
  for (const i of order) {
    const [from, to] = items[i];
    let row = rowEnds.findIndex((end) => end + gap <= from);
    if (row < 0) {
      row = rowEnds.length;
      rowEnds.push(to);
    } else {
      rowEnds[row] = to;
    }
    rows[i] = row;
  }
  return rows;
}
