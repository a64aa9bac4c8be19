import { HistoryError } from './history-error.js';
import { readNumber } from './read-number.js';
import { setOwn } from './set-own.js';
import { MAX_NESTING_DEPTH } from './value-limits.js';

const HEX4 = /^[0-9a-fA-F]{4}$/;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};
/** Integer literals this short are below 2^53, so `Number` reads them exactly. */
const EXACT_DIGITS = 15;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isDigit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

/**
 * Reads JSON as `JSON.parse` does, except that integers beyond 2^53 stay exact (bigints, see
 * readNumber), and that it refuses what would be misread or crash later: a key twice in one object
 * (JSON.parse keeps the last, other readers the first; EDN refuses it), a number out of range,
 * nesting deeper than MAX_NESTING_DEPTH.
 */
class JsonReader {
  private at = 0;
  private depth = 0;

  /** Newlines counted so far, for `lineAt` (element starts only move forward). */
  private countedTo = 0;
  private countedLine: number;

  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly firstLine: number,
  ) {
    this.countedLine = firstLine;
  }

  /** The line `at` is on: the text may span lines (a whole JSON file). */
  lineAt(at: number): number {
    if (at < this.countedTo) {
      this.countedTo = 0;
      this.countedLine = this.firstLine;
    }
    for (
      let i = this.text.indexOf('\n', this.countedTo);
      i >= 0 && i < at;
      i = this.text.indexOf('\n', i + 1)
    ) {
      this.countedLine++;
    }
    this.countedTo = at;
    return this.countedLine;
  }

  fail(message: string): never {
    throw new HistoryError(`${this.file}:${this.lineAt(this.at)}: ${message}`);
  }

  notJson(what: string): never {
    const column = this.at - (this.text.lastIndexOf('\n', this.at - 1) + 1) + 1;
    return this.fail(`not JSON (${what} at column ${column})`);
  }

  /** The next char code after whitespace (NaN at the end). */
  peek(): number {
    const text = this.text;
    let c = text.charCodeAt(this.at);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++this.at);
    return c;
  }

  read(): unknown {
    switch (this.peek()) {
      case OPEN_BRACE:
        return this.readObject();
      case OPEN_BRACKET:
        return this.readArray();
      case QUOTE:
        return this.readString();
      case 0x74:
        return this.readWord('true', true);
      case 0x66:
        return this.readWord('false', false);
      case 0x6e:
        return this.readWord('null', null);
      default:
        return this.readNumber();
    }
  }

  private readWord<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.at)) this.unexpected('a value');
    this.at += word.length;
    return value;
  }

  private readNumber(): number | bigint {
    const text = this.text;
    const start = this.at;
    let at = start;
    if (text.charCodeAt(at) === MINUS) at++;
    const firstDigit = at;
    while (isDigit(text.charCodeAt(at))) at++;
    const integerDigits = at - firstDigit;
    if (integerDigits === 0) return this.notANumberOrValue(firstDigit);
    if (integerDigits > 1 && text.charCodeAt(firstDigit) === ZERO) {
      this.at = firstDigit;
      return this.notJson('a number with a leading 0');
    }
    let integer = true;
    if (text.charCodeAt(at) === DOT) {
      integer = false;
      at = this.digits(at + 1);
    }
    const c = text.charCodeAt(at);
    if (c === LOWER_E || c === UPPER_E) {
      integer = false;
      const sign = text.charCodeAt(at + 1);
      at = this.digits(sign === PLUS || sign === MINUS ? at + 2 : at + 1);
    }
    const literal = text.slice(start, at);
    this.at = at;
    if (integer && integerDigits <= EXACT_DIGITS) return Number(literal);
    const value = readNumber(literal);
    if (value === undefined) this.fail(`number ${literal} is out of range`);
    return value;
  }

  /** NaN and Infinity (which JavaScript writes in JSON's place) are not JSON: say so. */
  private notANumberOrValue(at: number): never {
    const word = /^(?:NaN|Infinity)/.exec(this.text.slice(at, at + 'Infinity'.length))?.[0];
    if (word === undefined) return this.unexpected('a value');
    const literal = this.text.slice(this.at, at + word.length);
    return this.fail(
      `${literal} is not a number JSON has: write null, or the value as a string such as "${literal}"`,
    );
  }

  /** Past one or more digits from `from`. */
  private digits(from: number): number {
    let at = from;
    while (isDigit(this.text.charCodeAt(at))) at++;
    if (at === from) {
      this.at = at;
      this.notJson('a digit missing in a number');
    }
    return at;
  }

  private readString(): string {
    const text = this.text;
    const start = ++this.at;
    for (let at = start; at < text.length; at++) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        this.at = at + 1;
        return text.slice(start, at);
      }
      if (c === BACKSLASH || c < SPACE) return this.readEscapedString(start, at);
    }
    return this.notJson('a string is not closed');
  }

  /** The rest of a string from its first escape (or control character) at `from`. */
  private readEscapedString(start: number, from: number): string {
    const text = this.text;
    let out = text.slice(start, from);
    let run = from;
    for (let at = from; at < text.length;) {
      const c = text.charCodeAt(at);
      if (c === QUOTE) {
        this.at = at + 1;
        return out + text.slice(run, at);
      }
      if (c !== BACKSLASH) {
        if (c < SPACE) {
          this.at = at;
          this.notJson('a control character in a string');
        }
        at++;
        continue;
      }
      out += text.slice(run, at);
      this.at = at;
      const e = text[at + 1];
      if (e === 'u') {
        const hex = text.slice(at + 2, at + 6);
        if (!HEX4.test(hex)) this.notJson(`bad escape "\\u${hex}"`);
        out += String.fromCharCode(parseInt(hex, 16));
        at += 6;
      } else if (e !== undefined && e in ESCAPES) {
        out += ESCAPES[e];
        at += 2;
      } else {
        this.notJson(`bad escape "\\${e ?? ''}"`);
      }
      run = at;
    }
    this.at = text.length;
    return this.notJson('a string is not closed');
  }

  /** A top-level array's elements, each with the line it starts on; nothing may follow the array. */
  readElements(): { readonly value: unknown; readonly line: number }[] {
    if (this.peek() !== OPEN_BRACKET) this.unexpected('"["');
    this.enter();
    const items: { value: unknown; line: number }[] = [];
    if (this.peek() !== CLOSE_BRACKET) {
      do {
        this.peek();
        const line = this.lineAt(this.at);
        items.push({ value: this.read(), line });
      } while (this.eat(COMMA));
    }
    this.expect(CLOSE_BRACKET, '"," or "]"');
    this.depth--;
    if (!Number.isNaN(this.peek())) this.unexpected('the end of the file');
    return items;
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING_DEPTH) this.fail(`nested deeper than ${MAX_NESTING_DEPTH} levels`);
    this.at++;
  }

  private readArray(): unknown[] {
    this.enter();
    const items: unknown[] = [];
    if (this.peek() !== CLOSE_BRACKET) {
      do items.push(this.read());
      while (this.eat(COMMA));
    }
    this.expect(CLOSE_BRACKET, '"," or "]"');
    this.depth--;
    return items;
  }

  private readObject(): Record<string, unknown> {
    this.enter();
    const object: Record<string, unknown> = {};
    if (this.peek() !== CLOSE_BRACE) {
      do {
        if (this.peek() !== QUOTE) this.unexpected('a key in double quotes');
        const key = this.readString();
        if (Object.hasOwn(object, key)) {
          this.fail(`the key ${JSON.stringify(key)} appears twice in one object: keep one of them`);
        }
        this.expect(COLON, '":"');
        setOwn(object, key, this.read());
      } while (this.eat(COMMA));
    }
    this.expect(CLOSE_BRACE, '"," or "}"');
    this.depth--;
    return object;
  }

  /** Consumes `code` if it comes next (after whitespace). */
  eat(code: number): boolean {
    if (this.peek() !== code) return false;
    this.at++;
    return true;
  }

  private expect(code: number, expected: string): void {
    if (!this.eat(code)) this.unexpected(expected);
  }

  unexpected(expected: string): never {
    const c = this.text[this.at];
    return this.notJson(
      c === undefined ? `unexpected end, expected ${expected}` : `unexpected "${c}", expected ${expected}`,
    );
  }
}

/** Reads one JSON value from one line of a file; errors name the file and line. */
export function readJsonValue(text: string, file: string, line: number): unknown {
  const reader = new JsonReader(text, file, line);
  const value = reader.read();
  if (!Number.isNaN(reader.peek())) reader.unexpected('the end of the line');
  return value;
}

/** Reads a file holding one JSON array; each element comes with the line it starts on. */
export function readJsonArray(
  text: string,
  file: string,
): { readonly value: unknown; readonly line: number }[] {
  return new JsonReader(text, file, 1).readElements();
}
