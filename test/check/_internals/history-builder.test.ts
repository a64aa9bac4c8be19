import { describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { HistoryBuilder } from '../../../src/check/_internals/history-builder.js';
import { modelByName } from '../../../src/check/models/by-name.js';
import { HistoryError } from '../../../src/check/history/history-error.js';
import { generateKvHistory } from '../generate-history.js';

function build(ops: readonly Op[], expectedEntries?: number): unknown {
  const builder = new HistoryBuilder(modelByName('kv'), expectedEntries);
  for (const op of ops) builder.add(op);
  const partitions = builder.finish().map((p) => ({ key: p.key, ...p.data(true) }));
  return { ops: builder.ops, partitions };
}

describe('HistoryBuilder', () => {
  const ops = [...generateKvHistory({ seed: 7, ops: 300, clients: 6, keys: 3, infoRate: 0.1 })];

  it('pairs ops the same whatever the processes are called: small ints, large ints, negatives', () => {
    const expected = build(ops);
    const renamed = (rename: (p: number) => number): Op[] =>
      ops.map((op) => (op.process === 'nemesis' ? op : { ...op, process: rename(op.process) }));
    expect(build(renamed((p) => p + 1_000_000))).toEqual(expected);
    expect(build(renamed((p) => -1 - p))).toEqual(expected);
    expect(build(renamed((p) => p + 0.5))).toEqual(expected);
    expect(build(renamed((p) => (p % 2 === 0 ? p : p + 1_000_001)))).toEqual(expected);
    expect(build(ops, ops.length)).toEqual(expected);
  });

  it('counts an invoke never completed as info, and refuses a second invoke or a stray completion', () => {
    const invoke = (process: number, index: number): Op => ({
      index,
      time: index,
      type: 'invoke',
      process,
      f: 'write',
      value: ['k', index],
    });
    for (const process of [3, 1_000_000]) {
      const builder = new HistoryBuilder(modelByName('kv'));
      builder.add(invoke(process, 0));
      expect(() => {
        builder.add(invoke(process, 1));
      }).toThrow(HistoryError);
      builder.finish();
      expect(builder.ops).toBe(1);
      const stray = new HistoryBuilder(modelByName('kv'));
      expect(() => {
        stray.add({ ...invoke(process, 0), type: 'ok' });
      }).toThrow(/no open op/);
    }
  });
});
