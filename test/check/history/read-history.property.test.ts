import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseHistory, readHistoryFile } from '../../../src/check/history/read-history.js';
import type { Op, OpType } from '../../../src/core/op.js';
import { ednText } from '../../../src/check/_internals/edn-text.js';
import { canonical } from '../../../src/check/models/value.js';

const PROPERTY_RUNS = 150;
const TWO_53 = 2n ** 53n;
const TWO_63 = 2n ** 63n;

const text = fc.string({ unit: 'binary', maxLength: 12 });

/** Integers beyond 2^53 either way, up to 200 bits. */
const bigInteger = fc
  .tuple(fc.bigInt({ min: TWO_53, max: 2n ** 200n }), fc.boolean())
  .map(([n, negative]) => (negative ? -n : n));

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.maxSafeInteger(),
  bigInteger,
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
  text,
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
  .record(
    {
      index: fc.maxSafeNat(),
      time: fc.maxSafeNat(),
      type: fc.constantFrom<OpType>('invoke', 'ok', 'fail', 'info'),
      process: fc.oneof(fc.maxSafeNat(), fc.constant('nemesis' as const)),
      f: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
      value,
      node: text,
      error: text,
    },
    { requiredKeys: ['index', 'time', 'type', 'process', 'f', 'value'] },
  )
  .map((o) => ({ ...o, value: o.value ?? null }));

const history = fc.array(op, { minLength: 1, maxLength: 8 });

/** JSON with integers beyond 2^53 written as exact literals. */
function toJson(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (isEdnClass(v)) return JSON.stringify(ednText(v, false));
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    return `{${Object.entries(v)
      .map(([k, item]) => `${JSON.stringify(k)}:${toJson(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** EDN as Clojure prints it: a bigint beyond a long with N, strings raw but for `\` and `"`. */
function toEdn(v: unknown): string {
  switch (typeof v) {
    case 'bigint':
      return v >= TWO_63 || v < -TWO_63 ? `${v}N` : v.toString();
    case 'number':
    case 'boolean':
      return String(v);
    case 'string':
      return `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;
    default:
      if (v === null) return 'nil';
      if (isEdnClass(v)) return ednText(v, false);
      if (Array.isArray(v)) return `[${v.map(toEdn).join(' ')}]`;
      return `{${Object.entries(v as object)
        .map(([k, item]) => `${toEdn(k)} ${toEdn(item)}`)
        .join(', ')}}`;
  }
}

function opToEdn(o: Op): string {
  const fields = [
    `:index ${o.index}`,
    `:time ${o.time}`,
    `:type :${o.type}`,
    `:process ${o.process === 'nemesis' ? ':nemesis' : o.process}`,
    `:f ${toEdn(o.f)}`,
    `:value ${toEdn(o.value)}`,
    ...(o.node === undefined ? [] : [`:node ${toEdn(o.node)}`]),
    ...(o.error === undefined ? [] : [`:error ${toEdn(o.error)}`]),
  ];
  return `{${fields.join(', ')}}`;
}

/** A value read from EDN that JS has no type for (a map with keys of any type, a keyword…). */
function isEdnClass(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto !== null && proto !== Object.prototype;
}

/** Ops with their values in canonical form: equal when EDN's equality says their values are. */
const byValue = (ops: readonly Op[]): unknown[] => ops.map((o) => ({ ...o, value: canonical(o.value) }));

const toJsonl = (ops: readonly Op[]): string => ops.map(toJson).join('\n');
const toEdnHistory = (ops: readonly Op[]): string => ops.map(opToEdn).join('\n');

describe('history readers, round trip', () => {
  it('read back from JSONL exactly the ops written, big integers, unicode and nesting included', () => {
    fc.assert(
      fc.property(history, (ops) => {
        const parsed = parseHistory(toJsonl(ops), 'h.jsonl');
        expect(parsed.format).toBe('jsonl');
        expect(parsed.ops).toEqual(ops);
        expect(parsed.lines).toEqual(ops.map((_, i) => i + 1));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('read back from EDN exactly the ops written', () => {
    fc.assert(
      fc.property(history, (ops) => {
        const parsed = parseHistory(toEdnHistory(ops), 'h.edn');
        expect(parsed.format).toBe('edn');
        expect(byValue(parsed.ops)).toEqual(byValue(ops));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('read what they accepted the same way again after writing it out', () => {
    fc.assert(
      fc.property(history, fc.boolean(), (ops, edn) => {
        const once = parseHistory(edn ? toEdnHistory(ops) : toJsonl(ops), 'h');
        if (!edn) expect(parseHistory(toJsonl(once.ops), 'h').ops).toEqual(once.ops);
        expect(byValue(parseHistory(toEdnHistory(once.ops), 'h').ops)).toEqual(byValue(once.ops));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  describe('through a UTF-8 file', () => {
    let dir: string;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'mallory-round-trip-'));
    });

    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('read back the same ops from a file as from the text', async () => {
      await fc.assert(
        fc.asyncProperty(history, fc.boolean(), async (ops, edn) => {
          const file = path.join(dir, edn ? 'history.edn' : 'history.jsonl');
          await writeFile(file, edn ? toEdnHistory(ops) : toJsonl(ops), 'utf8');
          expect(byValue((await readHistoryFile(file)).ops)).toEqual(byValue(ops));
        }),
        { numRuns: 50 },
      );
    });
  });
});
