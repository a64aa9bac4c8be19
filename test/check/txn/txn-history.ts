import type { Op } from '../../../src/core/op.js';

export type Row = readonly [process: number, type: Op['type'], value: readonly (readonly unknown[])[]];

/** A history from compact rows; index and time are positions. */
export function history(...rows: readonly Row[]): Op[] {
  return rows.map(([process, type, value], index) => ({
    index,
    time: index,
    process,
    type,
    f: 'txn',
    value,
  }));
}

/** The invoke a completion's micro-ops imply: reads hold null. */
export function invokeOf(value: readonly (readonly unknown[])[]): (readonly unknown[])[] {
  return value.map(([f, k, v]) => (f === 'r' ? [f, k, null] : [f, k, v]));
}

/** Transactions one after the other, each invoked and completed before the next begins. */
export function serial(...txns: readonly Row[]): Op[] {
  return history(
    ...txns.flatMap(([process, type, value]): Row[] => [
      [process, 'invoke', invokeOf(value)],
      [process, type, type === 'ok' ? value : invokeOf(value)],
    ]),
  );
}

/** Read skew: T3 sees T2's append to y but not its append to x. */
export const readSkew: Op[] = history(
  [
    0,
    'invoke',
    [
      ['append', 'x', 1],
      ['append', 'y', 1],
    ],
  ],
  [
    1,
    'invoke',
    [
      ['r', 'x', null],
      ['r', 'y', null],
    ],
  ],
  [
    0,
    'ok',
    [
      ['append', 'x', 1],
      ['append', 'y', 1],
    ],
  ],
  [
    1,
    'ok',
    [
      ['r', 'x', []],
      ['r', 'y', [1]],
    ],
  ],
);
