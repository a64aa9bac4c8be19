import {
  BigDec,
  EdnChar,
  EdnDouble,
  EdnRatio,
  EdnMap,
  EdnSet,
  EdnSymbol,
  Keyword,
  Tagged,
} from '../history/edn-types.js';
import { instantMs } from '../history/instant.js';

/** `1.50M`, `15E-1M`: sign, digits, the point's place, exponent. */
const BIGDEC = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * A bigdecimal in one spelling per value: Clojure's `=` compares BigDecimals with `compareTo`
 * (Numbers.java, BigDecimalOps.equiv, since CLJ-1118), so `(= 1.0M 1.00M)` is true and so is
 * `(= 2E+3M 2000M)`: trailing zeros (the scale) do not count.
 */
export function normalBigDec(text: string): string {
  const m = BIGDEC.exec(text);
  if (m === null) return `${text}M`;
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  let digits = (whole + fraction).replace(/^0+/, '');
  let exp = Number(exponent) - fraction.length;
  if (digits === '') return '0M';
  const trailing = /0+$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailing);
  exp += trailing;
  const minus = sign === '-' ? '-' : '';
  if (exp >= 0 && exp <= PLAIN_EXPONENT_LIMIT) return `${minus}${digits}${'0'.repeat(exp)}M`;
  if (exp < 0 && -exp <= PLAIN_EXPONENT_LIMIT) {
    const padded = digits.padStart(-exp + 1, '0');
    return `${minus}${padded.slice(0, exp)}.${padded.slice(exp)}M`;
  }
  return `${minus}${digits}E${exp}M`;
}

/** Up to this many zeros a bigdecimal is written out (`0.001M`), beyond it with an exponent. */
const PLAIN_EXPONENT_LIMIT = 30;

function sortedUnique(texts: string[]): string[] {
  return [...new Set(texts)].sort();
}

/**
 * A value as EDN text. `canonical`: one text per value under EDN's equality — sets and maps
 * sorted by their elements' texts, lists as vectors (`(= [1 2] '(1 2))`), bigdecimals without
 * trailing zeros, `#inst` as the instant it denotes (ms, as Clojure reads it into a Date), `#uuid`
 * in lower case; metadata was dropped when read. Otherwise the value as written.
 */
export function ednText(value: unknown, canonical: boolean): string {
  switch (typeof value) {
    case 'undefined':
      return 'nil';
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isInteger(value) ? BigInt(value).toString() : String(value);
    case 'boolean':
      return String(value);
    case 'string':
      return JSON.stringify(value);
    case 'object':
      return value === null ? 'nil' : objectText(value, canonical);
    default:
      return String(value);
  }
}

function objectText(value: object, canonical: boolean): string {
  if (Array.isArray(value)) return `[${value.map((v: unknown) => ednText(v, canonical)).join(' ')}]`;
  if (value instanceof Keyword || value instanceof EdnSymbol || value instanceof EdnChar)
    return value.toString();
  if (value instanceof EdnDouble || value instanceof EdnRatio) return value.toString();
  if (value instanceof BigDec) return canonical ? normalBigDec(value.text) : value.toString();
  if (value instanceof EdnSet) {
    const items = value.items.map((v) => ednText(v, canonical));
    return `#{${(canonical ? sortedUnique(items) : items).join(' ')}}`;
  }
  if (value instanceof Tagged) return taggedText(value, canonical);
  const entries =
    value instanceof EdnMap
      ? value.entries.map(([k, v]) => `${ednText(k, canonical)} ${ednText(v, canonical)}`)
      : Object.entries(value).map(([k, v]) => `${JSON.stringify(k)} ${ednText(v, canonical)}`);
  return `{${(canonical ? entries.sort() : entries).join(', ')}}`;
}

function taggedText(value: Tagged, canonical: boolean): string {
  if (canonical && value.tag === 'inst' && typeof value.value === 'string') {
    const ms = instantMs(value.value);
    if (ms !== undefined) return `#inst ${JSON.stringify(new Date(ms).toISOString())}`;
  }
  if (canonical && value.tag === 'uuid' && typeof value.value === 'string') {
    return `#uuid ${JSON.stringify(value.value.toLowerCase())}`;
  }
  return `#${value.tag} ${ednText(value.value, canonical)}`;
}
