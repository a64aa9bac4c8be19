import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { HistoryBuilder } from '../../../src/check/_internals/history-builder.js';
import { OK, type PartitionData } from '../../../src/check/_internals/partition.js';
import { type Pruning, searchPartition } from '../../../src/check/_internals/search.js';
import type { Model } from '../../../src/check/model.js';
import { modelByName } from '../../../src/check/models/by-name.js';
import { generateKvHistory } from '../generate-history.js';
import { referenceSearch } from '../reference-search.js';

const PROPERTY_RUNS = 300;
const REFERENCE_BUDGET_MS = 2000;
const PRUNINGS: readonly Pruning[] = ['dead', 'shallower', 'off'];

function singlePartition(ops: readonly Op[], model: Model): PartitionData | undefined {
  const builder = new HistoryBuilder(model);
  for (const op of ops) builder.add(op);
  return builder.finish().at(0)?.data(true);
}

/** Changes the `which`-th ok read (modulo their count) to return `value`. */
function withRead(ops: readonly Op[], which: number, value: unknown): Op[] {
  const reads = ops.flatMap((op, i) => (op.type === 'ok' && op.f === 'read' ? [i] : []));
  if (reads.length === 0) return [...ops];
  const at = reads[which % reads.length];
  return ops.map((op, i) => (i === at ? { ...op, value } : op));
}

/** Plays the prefix on the model from its initial state: the state after it, or undefined if a step fails. */
function replay(partition: PartitionData, model: Model, prefix: readonly number[]): unknown {
  let state: unknown = model.init();
  for (const slot of prefix) {
    state = model.step(state, partition.inputs[slot], partition.outputs[slot]);
    if (state === undefined) return undefined;
  }
  return state;
}

const registerHistory = fc.record({
  seed: fc.integer({ min: 0, max: 0x7fffffff }),
  ops: fc.integer({ min: 1, max: 60 }),
  clients: fc.integer({ min: 1, max: 10 }),
  uniqueValues: fc.boolean(),
  values: fc.integer({ min: 1, max: 4 }),
  infoRate: fc.constantFrom(0, 0.05, 0.2, 0.4),
  readRate: fc.constantFrom(0.3, 0.5, 0.7),
  writeRate: fc.constantFrom(0.15, 0.3),
  corrupt: fc.option(fc.record({ which: fc.nat(), value: fc.integer({ min: -1, max: 40 }) })),
});

/** How many required (ok) and info ops a prefix holds. */
function composition(partition: PartitionData, prefix: readonly number[]): [number, number] {
  const required = prefix.filter((slot) => partition.status[slot] === OK).length;
  return [required, prefix.length - required];
}

describe('searchPartition', () => {
  it('gives the verdicts of the search before pruning, whatever the pruning', () => {
    const model = modelByName('cas-register');
    let invalid = 0;
    fc.assert(
      fc.property(registerHistory, ({ corrupt, ...options }) => {
        const generated = [...generateKvHistory({ ...options, keys: 1, kv: false })];
        const ops =
          corrupt === null
            ? generated
            : withRead(generated, corrupt.which, corrupt.value < 0 ? null : corrupt.value);
        const partition = singlePartition(ops, model);
        fc.pre(partition !== undefined);
        const expected = referenceSearch(partition, model, performance.now() + REFERENCE_BUDGET_MS);
        fc.pre(expected.valid !== 'unknown');
        for (const pruning of PRUNINGS) {
          const actual = searchPartition(partition, model, Infinity, { pruning });
          expect(actual.valid).toBe(expected.valid);
          if (actual.valid === false) {
            const state = replay(partition, model, actual.prefix);
            expect(state).not.toBeUndefined();
            expect(model.describe(state)).toBe(actual.stateBefore);
            expect(actual.prefix).not.toContain(actual.failing);
          }
        }
        if (!expected.valid) invalid++;
      }),
      { numRuns: PROPERTY_RUNS },
    );
    expect(invalid).toBeGreaterThan(PROPERTY_RUNS / 10);
  });

  it('finds as long a prefix with shallower pruning as with none, and blames the op that blocks it', () => {
    const model = modelByName('cas-register');
    fc.assert(
      fc.property(registerHistory, ({ corrupt, ...options }) => {
        const generated = [...generateKvHistory({ ...options, keys: 1, kv: false })];
        const ops =
          corrupt === null
            ? generated
            : withRead(generated, corrupt.which, corrupt.value < 0 ? null : corrupt.value);
        const partition = singlePartition(ops, model);
        fc.pre(partition !== undefined);
        const off = searchPartition(partition, model, performance.now() + REFERENCE_BUDGET_MS, {
          pruning: 'off',
        });
        fc.pre(off.valid === false);
        const dead = searchPartition(partition, model, Infinity);
        expect(dead.valid).toBe(false);
        if (dead.valid === false && dead.cut !== true) {
          expect(composition(partition, dead.prefix)).toEqual(composition(partition, off.prefix));
        }
        const shallower = searchPartition(partition, model, Infinity, { pruning: 'shallower' });
        expect(shallower.valid).toBe(false);
        if (shallower.valid !== false) return;
        expect(composition(partition, shallower.prefix)).toEqual(composition(partition, off.prefix));
        // The failing op returns first among those left: it blocks the prefix.
        const left = Array.from({ length: partition.size }, (_, slot) => slot).filter(
          (slot) => partition.status[slot] === OK && !shallower.prefix.includes(slot),
        );
        const firstReturn = Math.min(...left.map((slot) => partition.completePos[slot]));
        expect(partition.completePos[shallower.failing]).toBe(firstReturn);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

describe('searchPartition with more model states than a table holds', () => {
  /** Ten concurrent writes of distinct values, then a read of the last: each order meets new states. */
  const ops: Op[] = [];
  for (let p = 0; p < 10; p++)
    ops.push({ index: ops.length, time: p, type: 'invoke', process: p, f: 'write', value: p + 1 });
  for (let p = 0; p < 10; p++)
    ops.push({ index: ops.length, time: 100 + p, type: 'ok', process: p, f: 'write', value: p + 1 });
  ops.push({ index: ops.length, time: 200, type: 'invoke', process: 10, f: 'read', value: null });
  ops.push({ index: ops.length, time: 201, type: 'ok', process: 10, f: 'read', value: 10 });
  const model = modelByName('cas-register');

  it('answers unknown (its memory limit), where a JavaScript Map past 2^24 entries would throw', () => {
    const partition = singlePartition(ops, model);
    expect(partition).toBeDefined();
    expect(searchPartition(partition!, model, Infinity).valid).toBe(true);
    expect(searchPartition(partition!, model, Infinity, { maxStates: 3 })).toMatchObject({
      valid: 'unknown',
      limit: 'memory',
    });
  });
});
