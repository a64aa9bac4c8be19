import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { HistoryBuilder } from '../../../src/check/_internals/history-builder.js';
import { type ImpossibleOpLimits, findImpossibleOp } from '../../../src/check/_internals/impossible-op.js';
import type { Model } from '../../../src/check/model.js';
import { type RegisterInput, casRegisterModel } from '../../../src/check/models/cas-register.js';
import type { Canonical } from '../../../src/check/models/value.js';
import { generateKvHistory } from '../generate-history.js';
import { referenceSearch } from '../reference-search.js';

const PROPERTY_RUNS = 300;
const m = casRegisterModel;

/** The cas-register without `onlyStateFor` and `statesEntered`: every op is tried in every state. */
const plain: Model<Canonical, RegisterInput, Canonical> = {
  name: 'plain-cas-register',
  input: (f, value) => m.input(f, value),
  output: (f, value) => m.output(f, value),
  init: () => m.init(),
  step: (state, input, output) => m.step(state, input, output),
  hash: (state) => m.hash(state),
  equal: (a, b) => m.equal(a, b),
  describe: (state) => m.describe(state),
};

type RegisterPartition = Parameters<typeof findImpossibleOp<Canonical, RegisterInput, Canonical>>[0];

function partitionOf(
  ops: readonly Op[],
  model: Model<Canonical, RegisterInput, Canonical>,
): RegisterPartition {
  const builder = new HistoryBuilder(model);
  for (const op of ops) builder.add(op);
  return builder.finish()[0].data(true) as RegisterPartition;
}

function impossible(
  ops: readonly Op[],
  model: Model<Canonical, RegisterInput, Canonical>,
  limits?: ImpossibleOpLimits,
): number {
  return findImpossibleOp(partitionOf(ops, model), model, limits);
}

/**
 * A generated single-register history of up to `maxOps` ops and `maxClients` clients with one ok
 * read (if any) changed to return a value in [0, 30], or nil.
 */
function historyWithRead(maxOps: number, maxClients: number): fc.Arbitrary<Op[]> {
  return fc
    .tuple(
      fc.record({
        seed: fc.integer({ min: 0, max: 0x7fffffff }),
        ops: fc.integer({ min: 1, max: maxOps }),
        clients: fc.integer({ min: 1, max: maxClients }),
        uniqueValues: fc.boolean(),
        values: fc.integer({ min: 1, max: 4 }),
        infoRate: fc.constantFrom(0, 0.1, 0.3),
        writeRate: fc.constantFrom(0.1, 0.3),
      }),
      fc.nat(),
      fc.integer({ min: -1, max: 30 }),
    )
    .map(([options, which, value]) => {
      const ops = [...generateKvHistory({ ...options, keys: 1, kv: false })];
      const reads = ops.flatMap((op, i) => (op.type === 'ok' && op.f === 'read' ? [i] : []));
      const at = reads.length === 0 ? -1 : reads[which % reads.length];
      return ops.map((op, i) => (i === at ? { ...op, value: value < 0 ? null : value } : op));
    });
}

/** No closure: the one-step bound alone. */
const ONE_STEP: ImpossibleOpLimits = { maxDistinctOps: 0, maxStates: 0 };

describe('findImpossibleOp', () => {
  it('finds the same op whether or not the model says which state an op needs', () => {
    let found = 0;
    fc.assert(
      fc.property(historyWithRead(80, 8), (changed) => {
        const slot = impossible(changed, m);
        expect(slot).toBe(impossible(changed, plain));
        if (slot >= 0) found++;
      }),
      { numRuns: PROPERTY_RUNS },
    );
    expect(found).toBeGreaterThan(PROPERTY_RUNS / 10);
  });

  it('beyond its limits, an op the one-step bound rules out is one the closure rules out, in a history that is not linearizable', () => {
    let found = 0;
    fc.assert(
      fc.property(historyWithRead(60, 6), (changed) => {
        const slot = impossible(changed, m, ONE_STEP);
        if (slot < 0) return;
        found++;
        // Sound: the closure (a subset of the bound's states) rules an op out too, no later one,
        // and no order of the history linearizes it.
        const closure = impossible(changed, m);
        expect(closure).toBeGreaterThanOrEqual(0);
        const partition = partitionOf(changed, m);
        expect(partition.completePos[closure]).toBeLessThanOrEqual(partition.completePos[slot]);
        const reference = referenceSearch(partition, m, performance.now() + 2000);
        if (reference.valid !== 'unknown') expect(reference.valid).toBe(false);
      }),
      { numRuns: PROPERTY_RUNS },
    );
    expect(found).toBeGreaterThan(PROPERTY_RUNS / 20);
  });

  it('finds a read of a value whose only write failed in a history too large for the closure', () => {
    // 5,000 ops of 100 clients with unique values: more distinct ops than the closure takes.
    const ops = [
      ...generateKvHistory({
        seed: 1,
        ops: 5000,
        clients: 100,
        keys: 1,
        kv: false,
        uniqueValues: true,
        infoRate: 0.05,
      }),
    ];
    const failedCas = ops.findLast((op) => op.type === 'fail' && op.f === 'cas' && Array.isArray(op.value))!;
    const value = (failedCas.value as number[])[1];
    const writesIt = ops.filter(
      (op) =>
        op.type !== 'fail' &&
        op.type !== 'invoke' &&
        ((op.f === 'write' && op.value === value) ||
          (op.f === 'cas' && Array.isArray(op.value) && op.value[1] === value)),
    );
    expect(writesIt).toEqual([]);
    const reads = ops.flatMap((op, i) => (op.type === 'ok' && op.f === 'read' ? [i] : []));
    const at = reads[reads.length - 10];
    const changed = ops.map((op, i) => (i === at ? { ...op, value } : op));
    const partition = partitionOf(changed, m);
    const slot = findImpossibleOp(partition, m);
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(partition.outputs[slot]).toBe(value);
  });
});
