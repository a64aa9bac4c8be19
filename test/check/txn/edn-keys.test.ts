/**
 * Transactional keys and values compare by EDN equality, not by spelling, in both checkers: one
 * table of EDN histories, each with the verdict its checker must give.
 */
import { describe, expect, it } from 'vitest';

import type { Op } from '../../../src/core/op.js';
import { parseJepsenEdn } from '../../../src/check/history/jepsen-edn.js';
import { checkListAppend } from '../../../src/check/txn/check-list-append.js';
import { checkRwRegister } from '../../../src/check/txn/check-rw-register.js';
import type { ConsistencyModel } from '../../../src/check/txn/consistency-model.js';

/** An EDN history of transactions run one after the other: each `[process, invoke, ok]` (micro-ops as EDN). */
function ednSerial(
  ...txns: readonly (readonly [process: number, invoke: string, ok: string])[]
): readonly Op[] {
  const lines = txns.flatMap(([process, invoke, ok]) => [
    `{:process ${process}, :type :invoke, :f :txn, :value ${invoke}}`,
    `{:process ${process}, :type :ok, :f :txn, :value ${ok}}`,
  ]);
  return parseJepsenEdn(lines.join('\n'), 'history.edn').ops;
}

const CHECKERS = { 'list-append': checkListAppend, 'rw-register': checkRwRegister } as const;

interface EdnCase {
  readonly title: string;
  readonly checker: keyof typeof CHECKERS;
  readonly txns: readonly (readonly [process: number, invoke: string, ok: string])[];
  /** Each model the history is checked under, with the same expectations. */
  readonly models: readonly ConsistencyModel[];
  readonly valid: boolean;
  /** The anomaly types found, exactly (unchecked when absent). */
  readonly anomalyTypes?: readonly string[];
  /** The first anomaly of a type: its explanation exactly (`is`) or a part of it (`contains`). */
  readonly explanation?: { readonly type: string; readonly is?: string; readonly contains?: string };
}

const CASES: readonly EdnCase[] = [
  {
    title: 'catches a read of :x returning what was written to "x", another key',
    checker: 'rw-register',
    txns: [
      [0, '[[:w :x 1]]', '[[:w :x 1]]'],
      [1, '[[:w "x" 2]]', '[[:w "x" 2]]'],
      [2, '[[:r :x nil]]', '[[:r :x 2]]'],
    ],
    models: ['serializable'],
    valid: false,
    anomalyTypes: ['garbage-read'],
    explanation: { type: 'garbage-read', is: 'garbage-read: T5 read key :x = 2, which no transaction wrote' },
  },
  {
    title: 'accepts a read of the keyword :v where :v was written',
    checker: 'rw-register',
    txns: [
      [0, '[[:w [:k 1] :v]]', '[[:w [:k 1] :v]]'],
      [1, '[[:r [:k 1] nil]]', '[[:r [:k 1] :v]]'],
    ],
    models: ['strict-serializable'],
    valid: true,
    anomalyTypes: [],
  },
  {
    title: 'catches a read of the string "v" where the keyword :v was written',
    checker: 'rw-register',
    txns: [
      [0, '[[:w [:k 1] :v]]', '[[:w [:k 1] :v]]'],
      [1, '[[:r [:k 1] nil]]', '[[:r [:k 1] "v"]]'],
    ],
    models: ['serializable'],
    valid: false,
    anomalyTypes: ['garbage-read'],
  },
  {
    title: 'takes the keyword :x and the string "x" as two keys',
    checker: 'list-append',
    txns: [
      [0, '[[:append :x 1]]', '[[:append :x 1]]'],
      [1, '[[:append "x" 2]]', '[[:append "x" 2]]'],
      [2, '[[:r :x nil] [:r "x" nil]]', '[[:r :x [1]] [:r "x" [2]]]'],
    ],
    models: ['serializable', 'strict-serializable'],
    valid: true,
    anomalyTypes: [],
  },
  {
    title: 'catches a read of the string "a" where the keyword :a was appended',
    checker: 'list-append',
    txns: [
      [0, '[[:append :x :a]]', '[[:append :x :a]]'],
      [1, '[[:r :x nil]]', '[[:r :x ["a"]]]'],
    ],
    models: ['serializable'],
    valid: false,
    anomalyTypes: ['garbage-read'],
    explanation: {
      type: 'garbage-read',
      is: 'garbage-read: T3 read key :x = ["a"], with "a", which no transaction appended',
    },
  },
  {
    title: 'accepts vector keys such as [:anti 5], a list (:anti 5) being the same key',
    checker: 'list-append',
    txns: [
      [0, '[[:append [:anti 5] 1] [:append [:anti 6] 1]]', '[[:append [:anti 5] 1] [:append [:anti 6] 1]]'],
      [1, '[[:r (:anti 5) nil] [:r [:anti 6] nil]]', '[[:r (:anti 5) [1]] [:r [:anti 6] [1]]]'],
    ],
    models: ['strict-serializable'],
    valid: true,
    anomalyTypes: [],
  },
  {
    title: 'catches a stale read of the vector key [:anti 5], naming it',
    checker: 'list-append',
    txns: [
      [0, '[[:append [:anti 5] 1]]', '[[:append [:anti 5] 1]]'],
      [1, '[[:r [:anti 5] nil]]', '[[:r [:anti 5] []]]'],
    ],
    models: ['strict-serializable'],
    valid: false,
    explanation: { type: 'G-single-realtime', contains: 'key [:anti 5]' },
  },
];

describe('transactional checkers on EDN keys and values: EDN equality, not spelling', () => {
  it.each(CASES)('$checker $title', ({ checker, txns, models, valid, anomalyTypes, explanation }) => {
    const ops = ednSerial(...txns);
    for (const model of models) {
      const result = CHECKERS[checker](ops, { model });
      expect(result.valid).toBe(valid);
      if (anomalyTypes !== undefined) expect(result.anomalyTypes).toEqual(anomalyTypes);
      if (explanation !== undefined) {
        const text = result.anomalies[explanation.type as keyof typeof result.anomalies]?.[0].explanation;
        if (explanation.is !== undefined) expect(text).toBe(explanation.is);
        if (explanation.contains !== undefined) expect(text).toContain(explanation.contains);
      }
    }
  });
});
