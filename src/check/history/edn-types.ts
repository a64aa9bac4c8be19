import { exactJson } from '../../core/exact-json.js';

/**
 * The EDN types JS has no value of its own for, so that reading keeps what EDN's equality tells
 * apart: `:foo`, the symbol `foo`, `"foo"` and `\f` are four different values; `#{1 2}` is a set,
 * not a vector. Each class prints as EDN (`toString`) and writes as that text in JSON (`toJSON`),
 * so messages and exports show the value as the history spelled it.
 */

/** A keyword `:name` (namespaced: `:ns/name`); one instance per name, see `keyword`. */
export class Keyword {
  constructor(readonly name: string) {}
  toString(): string {
    return `:${this.name}`;
  }
  toJSON(): string {
    return this.toString();
  }
}

const KEYWORDS = new Map<string, Keyword>();

/** The keyword of this name: interned, as op fields repeat a few (`:type :ok`, `:f :read`). */
export function keyword(name: string): Keyword {
  let k = KEYWORDS.get(name);
  if (k === undefined) {
    k = new Keyword(name);
    KEYWORDS.set(name, k);
  }
  return k;
}

/** A symbol such as `foo` or `ns/foo`. */
export class EdnSymbol {
  constructor(readonly name: string) {}
  toString(): string {
    return this.name;
  }
  toJSON(): string {
    return this.name;
  }
}

const NAMED_CHARS: Readonly<Record<string, string>> = {
  '\n': 'newline',
  ' ': 'space',
  '\t': 'tab',
  '\r': 'return',
  '\b': 'backspace',
  '\f': 'formfeed',
};

/** A character `\a` (one UTF-16 unit, as a Java char). */
export class EdnChar {
  constructor(readonly char: string) {}
  toString(): string {
    const named = NAMED_CHARS[this.char];
    if (named !== undefined) return `\\${named}`;
    const code = this.char.charCodeAt(0);
    return code < 0x20 || code >= 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : `\\${this.char}`;
  }
  toJSON(): string {
    return this.toString();
  }
}

/** A set `#{…}`: its elements in the order written (equality ignores it, see `canonical`). */
export class EdnSet {
  constructor(readonly items: readonly unknown[]) {}
  toJSON(): unknown[] {
    return [...this.items];
  }
}

/** A map whose keys are not all strings (EDN: `{:a 1, [1 2] 3}`); entries in the order written. */
export class EdnMap {
  constructor(readonly entries: readonly (readonly [key: unknown, value: unknown])[]) {}

  /** The value under the keyword `:name`, if any. */
  get(name: string): unknown {
    const k = keyword(name);
    for (const [key, value] of this.entries) if (key === k) return value;
    return undefined;
  }

  toJSON(): Record<string, unknown> {
    return Object.fromEntries(this.entries.map(([k, v]) => [typeof k === 'string' ? k : String(k), v]));
  }
}

/** A bigdecimal `1.50M`, kept as written: a double would make 0.1M and 0.10000000000000001M one value. */
export class BigDec {
  constructor(readonly text: string) {}
  toString(): string {
    return `${this.text}M`;
  }
  toJSON(): string {
    return this.toString();
  }
}

/**
 * A ratio `1/2`, in lowest terms with a positive denominator (Clojure reads `2/4` as `1/2`, and
 * `4/2` as the integer 2, which the reader gives as an integer instead). `(= 1/2 0.5)` is false in
 * Clojure: a ratio equals only the same ratio.
 */
export class EdnRatio {
  constructor(
    readonly numerator: bigint,
    readonly denominator: bigint,
  ) {}
  toString(): string {
    return `${this.numerator}/${this.denominator}`;
  }
  toJSON(): string {
    return this.toString();
  }
}

/**
 * A double whose value is an integer (`1.0`, `2e3`): EDN's `=` tells it from the integer 1
 * (different number categories), which a JS number cannot. Other doubles are plain numbers.
 */
export class EdnDouble {
  constructor(readonly value: number) {}
  toString(): string {
    const text = String(this.value);
    return /[.e]/.test(text) ? text : `${text}.0`;
  }
  toJSON(): number {
    return this.value;
  }
}

/** A tagged literal `#tag value` (`#inst`, `#uuid`, a record such as `#jepsen.independent.Tuple{…}`). */
export class Tagged {
  constructor(
    readonly tag: string,
    readonly value: unknown,
  ) {}
  toJSON(): unknown {
    return { [`#${this.tag}`]: this.value };
  }
}

/** Jepsen's independent tuple `#jepsen.independent.Tuple{:key k :value v}`: one key's op of many. */
export const INDEPENDENT_TUPLE_TAG = 'jepsen.independent.Tuple';

/**
 * The value with EDN names as plain strings, sets as arrays, maps as objects: what op fields
 * (`:type :ok`, `:f :read`) and transaction micro-ops (`[:append :x 1]`) are read from.
 */
export function plainValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Keyword || value instanceof EdnSymbol) return value.name;
  if (value instanceof EdnChar) return value.char;
  if (value instanceof EdnDouble) return value.value;
  if (value instanceof BigDec) return Number(value.text);
  if (value instanceof EdnRatio) return Number(value.numerator) / Number(value.denominator);
  if (value instanceof Tagged) return plainValue(value.value);
  if (value instanceof EdnSet) return value.items.map(plainValue);
  if (Array.isArray(value)) return value.map(plainValue);
  if (value instanceof EdnMap) {
    return Object.fromEntries(
      value.entries.map(([k, v]) => {
        const key = plainValue(k);
        return [typeof key === 'string' ? key : exactJson(key), plainValue(v)];
      }),
    );
  }
  return value;
}
