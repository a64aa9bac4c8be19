import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { readEdnValue } from '../../../src/check/history/edn.js';
import { canonical } from '../../../src/check/models/value.js';

/**
 * EDN value equality (read, then `canonical`) against an independent reference: a structural
 * comparison over a generated value tree, following Clojure's `=` — vectors and lists equal
 * element-wise, sets and maps unordered, integers by value (N or not), bigdecimals by value
 * whatever their scale (BigDecimal compareTo), doubles apart from integers and bigdecimals,
 * keywords, symbols, strings and chars apart, `#inst` by instant, other tags by tag and value.
 */

type Tree =
  | { readonly kind: 'nil' }
  | { readonly kind: 'bool'; readonly v: boolean }
  | { readonly kind: 'int'; readonly v: bigint }
  | { readonly kind: 'double'; readonly v: number }
  /** A ratio not a whole number (those are ints, which may be spelled `4/2`). */
  | { readonly kind: 'ratio'; readonly n: bigint; readonly d: bigint }
  | { readonly kind: 'bigdec'; readonly unscaled: bigint; readonly scale: number }
  | { readonly kind: 'kw' | 'sym' | 'str'; readonly name: string }
  | { readonly kind: 'char'; readonly c: string }
  | { readonly kind: 'inst'; readonly ms: number }
  | { readonly kind: 'tag'; readonly tag: string; readonly value: Tree }
  | { readonly kind: 'vec' | 'list' | 'set'; readonly items: readonly Tree[] }
  | { readonly kind: 'map'; readonly entries: readonly (readonly [Tree, Tree])[] };

const PROPERTY_RUNS = 300;
const NAMES = ['a', 'b', 'x'];
const BASE_MS = Date.UTC(2026, 11, 3);

/** A small domain, so that independently drawn trees are often equal or nearly so. */
const leaf: fc.Arbitrary<Tree> = fc.oneof(
  fc.constant({ kind: 'nil' } as const),
  fc.boolean().map((v) => ({ kind: 'bool', v }) as const),
  fc.bigInt({ min: -2n, max: 2n }).map((v) => ({ kind: 'int', v }) as const),
  fc.constantFrom(9007199254740993n, 2n ** 70n).map((v) => ({ kind: 'int', v }) as const),
  fc.constantFrom(1, 0.5, -2.5, 3).map((v) => ({ kind: 'double', v }) as const),
  fc
    .record({ n: fc.bigInt({ min: -4n, max: 4n }), d: fc.bigInt({ min: 2n, max: 4n }) })
    .map(({ n, d }): Tree => (n % d === 0n ? { kind: 'int', v: n / d } : { kind: 'ratio', n, d })),
  fc
    .record({ unscaled: fc.bigInt({ min: -3n, max: 12n }), scale: fc.integer({ min: 0, max: 2 }) })
    .map((r) => ({ kind: 'bigdec', ...r }) as const),
  fc.record({ kind: fc.constantFrom('kw', 'sym', 'str' as const), name: fc.constantFrom(...NAMES) }),
  fc.constantFrom(...NAMES).map((c) => ({ kind: 'char', c }) as const),
  fc.integer({ min: 0, max: 2 }).map((s) => ({ kind: 'inst', ms: BASE_MS + s * 1000 }) as const),
);

const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc
      .record({
        kind: fc.constantFrom('vec', 'list', 'set' as const),
        items: fc.array(tie('tree'), { maxLength: 3 }),
      })
      .map((t): Tree => (t.kind === 'set' ? { kind: 'set', items: distinct(t.items) } : t)),
    fc
      .array(fc.tuple(tie('tree'), tie('tree')), { maxLength: 3 })
      .map((entries): Tree => ({ kind: 'map', entries: distinctKeys(entries) })),
    fc
      .record({ tag: fc.constantFrom('my/t', 'my/u'), value: tie('tree') })
      .map((t): Tree => ({ kind: 'tag', ...t })),
  ),
}));

function distinct(items: readonly Tree[]): Tree[] {
  return items.filter((item, i) => items.findIndex((other) => equal(item, other)) === i);
}

function distinctKeys(entries: readonly (readonly [Tree, Tree])[]): (readonly [Tree, Tree])[] {
  return entries.filter(([k], i) => entries.findIndex(([other]) => equal(k, other)) === i);
}

/** unscaled × 10^-scale as a fraction's numerator over 10^maxScale, for comparing two of them. */
function decimalAt(unscaled: bigint, scale: number, at: number): bigint {
  return unscaled * 10n ** BigInt(at - scale);
}

function unorderedEqual(a: readonly Tree[], b: readonly Tree[]): boolean {
  return a.length === b.length && a.every((x) => b.some((y) => equal(x, y)));
}

/** The reference: Clojure's `=` on the trees, written from its rules, not from the code under test. */
function equal(a: Tree, b: Tree): boolean {
  const seq = (t: Tree): boolean => t.kind === 'vec' || t.kind === 'list';
  if (seq(a) && seq(b)) {
    const [x, y] = [a, b] as { items: readonly Tree[] }[];
    return x.items.length === y.items.length && x.items.every((item, i) => equal(item, y.items[i]));
  }
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'nil':
      return true;
    case 'bool':
    case 'int':
    case 'double':
      return a.v === (b as typeof a).v;
    case 'bigdec': {
      const o = b as typeof a;
      const at = Math.max(a.scale, o.scale);
      return decimalAt(a.unscaled, a.scale, at) === decimalAt(o.unscaled, o.scale, at);
    }
    case 'ratio':
      return a.n * (b as typeof a).d === (b as typeof a).n * a.d;
    case 'kw':
    case 'sym':
    case 'str':
      return a.name === (b as typeof a).name;
    case 'char':
      return a.c === (b as typeof a).c;
    case 'inst':
      return a.ms === (b as typeof a).ms;
    case 'tag':
      return a.tag === (b as typeof a).tag && equal(a.value, (b as typeof a).value);
    case 'set':
      return unorderedEqual(a.items, (b as typeof a).items);
    case 'map': {
      const o = b as typeof a;
      return (
        a.entries.length === o.entries.length &&
        a.entries.every(([k, v]) => o.entries.some(([k2, v2]) => equal(k, k2) && equal(v, v2)))
      );
    }
    default:
      return false;
  }
}

/** A seeded choice source, so one tree can be spelled many ways. */
function chooser(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s % n;
  };
}

function shuffled<T>(items: readonly T[], pick: (n: number) => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = pick(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function bigdecText(unscaled: bigint, scale: number, extraZeros: number): string {
  const digits = (unscaled < 0n ? -unscaled : unscaled) * 10n ** BigInt(extraZeros);
  const s = scale + extraZeros;
  const text = digits.toString().padStart(s + 1, '0');
  const body = s === 0 ? text : `${text.slice(0, text.length - s)}.${text.slice(text.length - s)}`;
  return `${unscaled < 0n ? '-' : ''}${body}M`;
}

function instText(ms: number, pick: (n: number) => number): string {
  if (pick(2) === 0) return `#inst "${new Date(ms).toISOString()}"`;
  const shifted = new Date(ms + 2 * 3_600_000).toISOString().replace('.000Z', '+02:00');
  return `#inst "${shifted}"`;
}

/** One of the many EDN spellings of a tree: collections reordered, lists for vectors, N, scale, metadata. */
function spell(t: Tree, pick: (n: number) => number): string {
  const meta = pick(8) === 0 ? '^{:m 1} ' : '';
  const all = (items: readonly Tree[]): string => items.map((i) => spell(i, pick)).join(pick(2) ? ' ' : ', ');
  switch (t.kind) {
    case 'nil':
      return 'nil';
    case 'bool':
      return String(t.v);
    case 'int': {
      const how = pick(3);
      if (how === 2) return `${t.v * 3n}/3`;
      return how === 1 ? `${t.v}N` : t.v.toString();
    }
    case 'ratio': {
      const k = BigInt(pick(3) + 1);
      return `${t.n * k}/${t.d * k}`;
    }
    case 'double':
      return Number.isInteger(t.v) ? `${t.v}.0` : String(t.v);
    case 'bigdec':
      return bigdecText(t.unscaled, t.scale, pick(3));
    case 'kw':
      return `:${t.name}`;
    case 'sym':
      return t.name;
    case 'str':
      return JSON.stringify(t.name);
    case 'char':
      return `\\${t.c}`;
    case 'inst':
      return instText(t.ms, pick);
    case 'tag':
      return `#${t.tag} ${spell(t.value, pick)}`;
    case 'vec':
    case 'list':
      return pick(2) ? `${meta}[${all(t.items)}]` : `${meta}(${all(t.items)})`;
    case 'set':
      return `${meta}#{${all(shuffled(t.items, pick))}}`;
    case 'map':
      return `${meta}{${shuffled(t.entries, pick)
        .map(([k, v]) => `${spell(k, pick)} ${spell(v, pick)}`)
        .join(', ')}}`;
  }
}

const read = (text: string): unknown => canonical(readEdnValue(text, 'gen.edn', 1));

describe('EDN value equality, against a structural reference on generated values', () => {
  it('gives every spelling of one value the same canonical form', () => {
    fc.assert(
      fc.property(tree, fc.integer(), fc.integer(), (t, s1, s2) => {
        expect(read(spell(t, chooser(s1)))).toBe(read(spell(t, chooser(s2))));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('gives two values the same canonical form exactly when the reference finds them equal', () => {
    fc.assert(
      fc.property(tree, tree, fc.integer(), (a, b, seed) => {
        const pick = chooser(seed);
        expect(read(spell(a, pick)) === read(spell(b, pick))).toBe(equal(a, b));
      }),
      { numRuns: PROPERTY_RUNS * 3 },
    );
  });

  it('tells apart values that differ only in the type of one name', () => {
    const kinds = ['kw', 'sym', 'str'] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...NAMES),
        fc.constantFrom(...kinds),
        fc.constantFrom(...kinds),
        (name, k1, k2) => {
          const a: Tree = { kind: 'vec', items: [{ kind: k1, name }] };
          const b: Tree = { kind: 'set', items: [{ kind: k2, name }] };
          const c: Tree = { kind: 'vec', items: [{ kind: 'char', c: name }] };
          const pick = chooser(1);
          expect(read(spell(a, pick)) === read(spell({ ...b, kind: 'vec' }, pick))).toBe(k1 === k2);
          expect(read(spell(a, pick))).not.toBe(read(spell(b, pick)));
          expect(read(spell(a, pick))).not.toBe(read(spell(c, pick)));
        },
      ),
    );
  });
});
