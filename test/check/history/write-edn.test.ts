import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { plainValue } from '../../../src/check/history/edn-types.js';
import { parseJepsenEdn } from '../../../src/check/history/jepsen-edn.js';
import { ednOp, ednValue } from '../../../src/check/history/write-edn.js';
import type { Op, OpType } from '../../../src/core/op.js';

const PROPERTY_RUNS = 200;
const TWO_53 = 2n ** 53n;

const text = fc.string({ unit: 'binary', maxLength: 12 });

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.maxSafeInteger(),
  fc.bigInt({ min: TWO_53, max: 2n ** 100n }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
  text,
  fc.tuple(fc.constantFrom('append', 'r', 'w'), fc.oneof(fc.maxSafeInteger(), text), fc.maxSafeInteger()),
);

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
}));

const op: fc.Arbitrary<Op> = fc
  .record({
    index: fc.nat(),
    time: fc.maxSafeNat(),
    type: fc.constantFrom<OpType>('invoke', 'ok', 'fail', 'info'),
    process: fc.oneof(fc.nat(), fc.constant('nemesis' as const)),
    f: fc.oneof(
      fc.constantFrom('read', 'write', 'txn', 'start-partition'),
      text.filter((s) => s !== ''),
    ),
    value,
    node: fc.option(text, { nil: undefined }),
    error: fc.option(text, { nil: undefined }),
  })
  .map(({ node, error, ...rest }) => ({
    ...rest,
    ...(node === undefined ? {} : { node }),
    ...(error === undefined ? {} : { error }),
  }));

describe('ednOp', () => {
  it('writes a Jepsen history.edn line, with keyword micro-op names', () => {
    const line = ednOp({
      index: 3,
      time: 1500,
      type: 'ok',
      process: 0,
      f: 'txn',
      value: [
        ['append', 1, 2],
        ['r', 'x', [1, 2]],
      ],
      node: 'n1',
    });
    expect(line).toBe(
      '{:type :ok, :f :txn, :value [[:append 1 2] [:r "x" [1 2]]], :process 0, :time 1500, :index 3, :node "n1"}',
    );
    expect(ednValue({ from: 'n1', 'to all': [null, 9007199254740993n] })).toBe(
      '{:from "n1", "to all" [nil 9007199254740993]}',
    );
  });

  it('reads back as the same ops', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 5 }), (ops) => {
        const parsed = parseJepsenEdn(ops.map((o) => `${ednOp(o)}\n`).join(''), 'h.edn');
        // Map keys come back as keywords where the name allows (as Jepsen writes them), so the
        // values are compared by their plain content.
        expect(parsed.ops.map((o) => ({ ...o, value: plainValue(o.value) }))).toEqual(ops);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});
