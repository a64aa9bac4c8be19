import { ednText } from '../_internals/edn-text.js';
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
  keyword,
} from './edn-types.js';
import { HistoryError } from './history-error.js';
import { instantMs } from './instant.js';
import { exactInteger, readNumber } from './read-number.js';
import { MAX_INTEGER_DIGITS, MAX_NESTING_DEPTH } from './value-limits.js';

/**
 * An EDN value as JS: nil as null, strings, booleans, vectors and lists as arrays, integers as
 * numbers (beyond 2^53 bigints, see readNumber), doubles as numbers (an integral one as
 * EdnDouble), and the types JS has none of as the classes of edn-types.ts.
 */
export type EdnValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Keyword
  | EdnSymbol
  | EdnChar
  | BigDec
  | EdnDouble
  | EdnRatio
  | Tagged
  | EdnSet
  | EdnMap
  | readonly EdnValue[];

/** One top-level form (or element of a top-level vector) and the line it starts on (1-based). */
export interface EdnForm {
  readonly value: EdnValue;
  readonly line: number;
}

/** ASCII classes by char code (non-ASCII whitespace goes through the regexp). */
const WHITESPACE_CODES = new Uint8Array(128);
const DELIMITER_CODES = new Uint8Array(128);
for (const c of ' \t\n\r\f\v,') WHITESPACE_CODES[c.charCodeAt(0)] = DELIMITER_CODES[c.charCodeAt(0)] = 1;
for (const c of '()[]{}";') DELIMITER_CODES[c.charCodeAt(0)] = 1;
const OTHER_WHITESPACE = /\s/;

/** A number token: decimal (N: BigInt, M: BigDecimal), or hexadecimal. */
const NUMBER_TOKEN = /^[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?[NM]?$/;
/** A ratio `n/d` (Clojure's reader: an optional sign on the numerator only). */
const RATIO_TOKEN = /^([+-]?\d+)\/(\d+)$/;
const HEX_TOKEN = /^([+-]?)0[xX]([0-9a-fA-F]+)N?$/;
/** Clojure reads `010` as octal 8: refused rather than read as 10. */
const OCTAL_TOKEN = /^[+-]?0\d+N?$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** A float token (a fraction or an exponent): read as a double unless it ends in M. */
const FLOAT_TOKEN = /[.eE]/;

function isWhitespace(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code < 128 ? WHITESPACE_CODES[code] === 1 : OTHER_WHITESPACE.test(text[at]);
}

function isDelimiter(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code < 128 ? DELIMITER_CODES[code] === 1 : OTHER_WHITESPACE.test(text[at]);
}

/**
 * Reads the EDN Jepsen histories use: maps, vectors, lists, sets, strings, keywords, symbols,
 * numbers (bigdecimals exact), characters, nil, booleans, tagged literals (kept with their tag;
 * `#inst` and `#uuid` checked), metadata `^…` (dropped: it does not count in equality), `#_`
 * discard and `;` comments. Each value keeps its EDN type, so equality can follow EDN's.
 */
class EdnReader {
  private at = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly file: string,
    private line = 1,
  ) {}

  fail(message: string, line = this.line): never {
    throw new HistoryError(`${this.file}:${line}: ${message}`);
  }

  /** Skips whitespace, commas and comments; true if a form follows. */
  skip(): boolean {
    const text = this.text;
    while (this.at < text.length) {
      const c = text[this.at];
      if (c === '\n') {
        this.line++;
        this.at++;
      } else if (isWhitespace(text, this.at)) {
        this.at++;
      } else if (c === ';') {
        while (this.at < text.length && text[this.at] !== '\n') this.at++;
      } else if (c === '#' && text[this.at + 1] === '_') {
        this.at += 2;
        this.read();
      } else {
        return true;
      }
    }
    return false;
  }

  peek(): string {
    return this.text[this.at];
  }

  get currentLine(): number {
    return this.line;
  }

  get offset(): number {
    return this.at;
  }

  /** Consumes `c` if it is next (after whitespace). */
  eat(c: string): boolean {
    if (this.skip() && this.text[this.at] === c) {
      this.at++;
      return true;
    }
    return false;
  }

  read(): EdnValue {
    if (++this.depth > MAX_NESTING_DEPTH) this.fail(`nested deeper than ${MAX_NESTING_DEPTH} levels`);
    const value = this.readForm();
    this.depth--;
    return value;
  }

  private readForm(): EdnValue {
    if (!this.skip()) this.fail('unexpected end of file: a form is missing or a bracket is not closed');
    const text = this.text;
    const c = text[this.at];
    switch (c) {
      case '(':
        this.at++;
        return this.readSeq(')');
      case '[':
        this.at++;
        return this.readSeq(']');
      case '{':
        this.at++;
        return this.readMap();
      case '"':
        return this.readString();
      case '\\':
        return new EdnChar(this.readChar());
      case '^':
        this.at++;
        this.read();
        return this.read();
      case ')':
      case ']':
      case '}':
        return this.fail(`unexpected "${c}"`);
      case '#': {
        const after = text[this.at + 1];
        if (after === '{') {
          this.at += 2;
          return this.readSet();
        }
        if (after === '#') {
          this.at++;
          this.fail(`cannot read #${this.readToken()}: non-finite numbers are not supported`);
        }
        this.at++;
        return this.readTagged(this.readToken());
      }
      default:
        return this.atom(this.readToken());
    }
  }

  private readSeq(close: string): EdnValue[] {
    const startLine = this.line;
    const items: EdnValue[] = [];
    for (;;) {
      if (!this.skip()) this.fail(`"${close}" missing for the collection opened here`, startLine);
      if (this.text[this.at] === close) {
        this.at++;
        return items;
      }
      items.push(this.read());
    }
  }

  private readSet(): EdnSet {
    const startLine = this.line;
    const items = this.readSeq('}');
    const seen = new DistinctValues();
    for (const item of items) {
      if (!seen.add(item))
        this.fail(`the element ${ednText(item, false)} appears twice in one set`, startLine);
    }
    return new EdnSet(items);
  }

  private readMap(): EdnMap {
    const startLine = this.line;
    const entries: [EdnValue, EdnValue][] = [];
    const seen = new DistinctValues();
    for (;;) {
      if (!this.skip()) this.fail('"}" missing for the map opened here', startLine);
      if (this.text[this.at] === '}') {
        this.at++;
        return new EdnMap(entries);
      }
      const keyLine = this.line;
      const key = this.read();
      if (!this.skip() || this.text[this.at] === '}') this.fail('a map has a key without a value');
      if (!seen.add(key)) this.fail(`the key ${ednText(key, false)} appears twice in one map`, keyLine);
      entries.push([key, this.read()]);
    }
  }

  /** `#inst "…"` and `#uuid "…"` must hold what their tag says; other tags are kept as they are. */
  private readTagged(tag: string): Tagged {
    if (tag === '') this.fail(`unexpected "#${this.text[this.at] ?? ''}"`);
    const line = this.line;
    const value = this.read();
    if (tag === 'inst' && (typeof value !== 'string' || instantMs(value) === undefined)) {
      this.fail(
        `#inst ${ednText(value, false)} is not an instant: write #inst "2026-12-03T10:00:00.000Z"`,
        line,
      );
    }
    if (tag === 'uuid' && (typeof value !== 'string' || !UUID.test(value))) {
      this.fail(`#uuid ${ednText(value, false)} is not a UUID: write #uuid "8-4-4-4-12 hex digits"`, line);
    }
    return new Tagged(tag, value);
  }

  private readString(): string {
    const startLine = this.line;
    const text = this.text;
    let out = '';
    this.at++;
    for (;;) {
      if (this.at >= text.length) this.fail('a string is not closed', startLine);
      const c = text[this.at++];
      if (c === '"') return out;
      if (c === '\n') this.line++;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = text[this.at++];
      const escapes: Readonly<Record<string, string>> = {
        n: '\n',
        t: '\t',
        r: '\r',
        '"': '"',
        '\\': '\\',
        b: '\b',
        f: '\f',
      };
      if (e === 'u') {
        const hex = text.slice(this.at, this.at + 4);
        if (!HEX4.test(hex)) this.fail(`bad string escape "\\u${hex}"`);
        out += String.fromCharCode(parseInt(hex, 16));
        this.at += 4;
      } else if (e in escapes) {
        out += escapes[e];
      } else {
        this.fail(`unknown string escape "\\${e ?? ''}"`);
      }
    }
  }

  private readChar(): string {
    this.at++;
    const token = this.readToken();
    const named: Readonly<Record<string, string>> = { newline: '\n', space: ' ', tab: '\t', return: '\r' };
    if (token.length === 0) {
      if (this.at >= this.text.length) this.fail('a character literal "\\" is cut off');
      return this.text[this.at++];
    }
    if (token.length === 5 && token.startsWith('u') && HEX4.test(token.slice(1))) {
      return String.fromCharCode(parseInt(token.slice(1), 16));
    }
    return named[token] ?? token;
  }

  private readToken(): string {
    const start = this.at;
    while (this.at < this.text.length && !isDelimiter(this.text, this.at)) this.at++;
    return this.text.slice(start, this.at);
  }

  private atom(token: string): EdnValue {
    if (token === 'nil') return null;
    if (token === 'true') return true;
    if (token === 'false') return false;
    if (token.startsWith(':')) return keyword(token.slice(1));
    if (/^[+-]?\d/.test(token)) return this.readNumberToken(token);
    if (token.length === 0) this.fail(`unexpected "${this.text[this.at]}"`);
    return new EdnSymbol(token);
  }

  private readNumberToken(token: string): number | bigint | BigDec | EdnDouble | EdnRatio {
    const ratio = RATIO_TOKEN.exec(token);
    if (ratio !== null) return this.readRatio(token, ratio[1], ratio[2]);
    const hex = HEX_TOKEN.exec(token);
    if (hex !== null) {
      const [, sign, digits] = hex;
      if (digits.length > MAX_INTEGER_DIGITS) this.fail(`number ${token} is out of range`);
      const magnitude = BigInt(`0x${digits}`);
      return exactInteger(sign === '-' ? -magnitude : magnitude);
    }
    if (!NUMBER_TOKEN.test(token)) this.fail(`cannot read number "${token}"`);
    if (OCTAL_TOKEN.test(token))
      this.fail(`cannot read number "${token}": Clojure reads a leading 0 as octal`);
    if (token.endsWith('M')) return new BigDec(token.slice(0, -1).replace(/^\+/, ''));
    const value = readNumber(token.replace(/N$/, ''));
    if (value === undefined) this.fail(`number ${token} is out of range`);
    return typeof value === 'number' && Number.isInteger(value) && FLOAT_TOKEN.test(token)
      ? new EdnDouble(value)
      : value;
  }

  /** A ratio in lowest terms, or the integer it is (`4/2` is 2), as Clojure's reader gives it. */
  private readRatio(
    token: string,
    numeratorText: string,
    denominatorText: string,
  ): number | bigint | EdnRatio {
    if (numeratorText.replace(/^[+-]/, '').length + denominatorText.length > MAX_INTEGER_DIGITS) {
      this.fail(`number ${token} is out of range`);
    }
    let numerator = BigInt(numeratorText);
    let denominator = BigInt(denominatorText);
    if (denominator === 0n) this.fail(`cannot read ratio ${token}: divide by zero`);
    const divisor = gcd(numerator < 0n ? -numerator : numerator, denominator);
    numerator /= divisor;
    denominator /= divisor;
    return denominator === 1n ? exactInteger(numerator) : new EdnRatio(numerator, denominator);
  }
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a, b];
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/**
 * Reads EDN text as top-level forms; a file holding one vector or list of forms (a whole history
 * written as one collection) yields that collection's elements, each with its own line. A
 * collection whose first element is not a collection is a form of its own: Knossos's test
 * histories write one op a line as `[process type f value]`.
 */
export function readEdnForms(text: string, file: string): EdnForm[] {
  const reader = new EdnReader(text, file);
  const forms: EdnForm[] = [];
  if (reader.skip() && (reader.peek() === '[' || reader.peek() === '(')) {
    const line = reader.currentLine;
    const elements = readCollectionElements(reader);
    const isHistory = elements.length === 0 || isCollection(elements[0].value);
    if (isHistory) {
      if (reader.skip())
        reader.fail('text after the history collection: write one collection of ops, or one op a line');
      return elements;
    }
    forms.push({ value: elements.map((e) => e.value), line });
  }
  while (reader.skip()) {
    const line = reader.currentLine;
    forms.push({ value: reader.read(), line });
  }
  return forms;
}

function isCollection(value: EdnValue): boolean {
  return Array.isArray(value) || value instanceof EdnMap;
}

/** The elements of the collection that starts next, each with the line it starts on. */
function readCollectionElements(reader: EdnReader): EdnForm[] {
  const close = reader.peek() === '[' ? ']' : ')';
  const startLine = reader.currentLine;
  reader.eat(reader.peek());
  const elements: EdnForm[] = [];
  for (;;) {
    if (!reader.skip()) reader.fail(`"${close}" missing for the collection opened here`, startLine);
    if (reader.eat(close)) return elements;
    const line = reader.currentLine;
    elements.push({ value: reader.read(), line });
  }
}

/** Reads the first EDN form of a fragment, and returns the text after it (e.g. an op's value, then its error). */
export function readEdnPrefix(
  text: string,
  file: string,
  line: number,
): { readonly value: EdnValue; readonly rest: string } {
  const reader = new EdnReader(text, file, line);
  const value = reader.read();
  return { value, rest: text.slice(reader.offset) };
}

/** Reads one EDN form from a fragment (e.g. a value on a log line). */
export function readEdnValue(text: string, file: string, line: number): EdnValue {
  const reader = new EdnReader(text, file, line);
  const value = reader.read();
  if (reader.skip()) reader.fail(`expected one value, got "${text}"`);
  return value;
}

/** Up to this many values, a scan finds one seen before faster than building sets does. */
const SCAN_LIMIT = 8;

/**
 * Tells whether a value was seen before, under EDN's equality (a set's elements, a map's keys).
 * An op map has a few keyword keys: those are compared by a scan, and sets are built only past
 * SCAN_LIMIT values or for a value that is not an atom.
 */
class DistinctValues {
  private readonly first: unknown[] = [];
  private atoms: Set<unknown> | undefined;
  private texts: Set<string> | undefined;

  add(value: EdnValue): boolean {
    const atom = typeof value !== 'object' || value === null || value instanceof Keyword;
    if (!atom) {
      this.texts ??= new Set();
      const before = this.texts.size;
      return this.texts.add(ednText(value, true)).size > before;
    }
    const normal = typeof value === 'bigint' ? exactInteger(value) : value;
    if (this.atoms === undefined) {
      if (this.first.includes(normal)) return false;
      this.first.push(normal);
      if (this.first.length > SCAN_LIMIT) this.atoms = new Set(this.first);
      return true;
    }
    const before = this.atoms.size;
    return this.atoms.add(normal).size > before;
  }
}
