import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { HistoryBuilder } from '../../../src/check/_internals/history-builder.js';
import { findImpossibleOp } from '../../../src/check/_internals/impossible-op.js';
import type { Model } from '../../../src/check/model.js';
import { type RegisterInput, casRegisterModel } from '../../../src/check/models/cas-register.js';
import type { Canonical } from '../../../src/check/models/value.js';
import { generateKvHistory } from '../generate-history.js';

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

function impossible(ops: readonly Op[], model: Model<Canonical, RegisterInput, Canonical>): number {
  const builder = new HistoryBuilder(model);
  for (const op of ops) builder.add(op);
  const partition = builder.finish()[0].data(true);
  return findImpossibleOp(
    partition as Parameters<typeof findImpossibleOp<Canonical, RegisterInput, Canonical>>[0],
    model,
  );
}

describe('findImpossibleOp', () => {
  it('finds the same op whether or not the model says which state an op needs', () => {
    let found = 0;
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 0, max: 0x7fffffff }),
          ops: fc.integer({ min: 1, max: 80 }),
          clients: fc.integer({ min: 1, max: 8 }),
          uniqueValues: fc.boolean(),
          values: fc.integer({ min: 1, max: 4 }),
          infoRate: fc.constantFrom(0, 0.1, 0.3),
          writeRate: fc.constantFrom(0.1, 0.3),
        }),
        fc.nat(),
        fc.integer({ min: -1, max: 30 }),
        (options, which, value) => {
          const ops = [...generateKvHistory({ ...options, keys: 1, kv: false })];
          const reads = ops.flatMap((op, i) => (op.type === 'ok' && op.f === 'read' ? [i] : []));
          const at = reads.length === 0 ? -1 : reads[which % reads.length];
          const changed = ops.map((op, i) => (i === at ? { ...op, value: value < 0 ? null : value } : op));
          const slot = impossible(changed, m);
          expect(slot).toBe(impossible(changed, plain));
          if (slot >= 0) found++;
        },
      ),
      { numRuns: PROPERTY_RUNS },
    );
    expect(found).toBeGreaterThan(PROPERTY_RUNS / 10);
  });
});
