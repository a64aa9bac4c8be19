import { describe, expect, it } from 'vitest';

import { labelRows } from '../../src/core/label-rows.js';

describe('labelRows', () => {
  it('keeps labels that do not overlap in the first row', () => {
    expect(
      labelRows(
        [
          [0, 10],
          [20, 30],
          [40, 50],
        ],
        5,
      ),
    ).toEqual([0, 0, 0]);
  });

  it('moves an overlapping label to the first row where it fits, in the order given', () => {
    // By start: b takes row 0 (to 60); c overlaps b: row 1 (to 40); a overlaps b but fits after
    // c in row 1; d fits after b in row 0.
    const rows = labelRows(
      [
        [50, 90],
        [0, 60],
        [10, 40],
        [65, 80],
      ],
      4,
    );
    expect(rows).toEqual([1, 0, 1, 0]);
    expect(
      labelRows([
        [0, 10],
        [0, 10],
        [0, 10],
      ]),
    ).toEqual([0, 1, 2]);
  });

  it('never puts two overlapping labels in one row', () => {
    const items: [number, number][] = Array.from({ length: 40 }, (_, i) => [
      (i * 37) % 200,
      ((i * 37) % 200) + 30 + (i % 7),
    ]);
    const rows = labelRows(items, 2);
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        if (rows[i] !== rows[j]) continue;
        const [a, b] = [items[i], items[j]].sort((x, y) => x[0] - y[0]);
        expect(a[1] + 2).toBeLessThanOrEqual(b[0]);
      }
    }
  });
});
