import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mallory } from './_helpers/cli.js';
import { REPO_ROOT } from '../check/data-dir.js';

let dir: string;
let files = 0;

beforeAll(async () => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'check.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  }
  dir = await mkdtemp(path.join(tmpdir(), 'mallory-check-values-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function check(name: string, text: string, ...flags: string[]): ReturnType<typeof mallory> {
  const file = path.join(dir, `${files++}-${name}`);
  await writeFile(file, text);
  return mallory('check', ...flags, file);
}

/** A write of `written` that completes, then a read that returns `read`: linearizable iff they are equal. */
function writeThenRead(written: string, read: string): string {
  return [
    `{:type :invoke, :f :write, :value ${written}, :process 0}`,
    `{:type :ok, :f :write, :value ${written}, :process 0}`,
    '{:type :invoke, :f :read, :value nil, :process 1}',
    `{:type :ok, :f :read, :value ${read}, :process 1}`,
  ].join('\n');
}

/**
 * Pairs EDN's `=` holds equal (Clojure: `(= #{1 2} #{2 1})` and so on): a read of the second after
 * a write of the first is linearizable.
 */
const EQUAL: readonly (readonly [string, string])[] = [
  ['#{1 2}', '#{2 1}'],
  ['{:a 1, :b 2}', '{:b 2, :a 1}'],
  ['#inst "2026-12-03T10:00:00Z"', '#inst "2026-12-03T11:00:00.000+01:00"'],
  ['^{:a 1} [1]', '[1]'],
  ['[1 2]', '(1 2)'],
  ['1.0M', '1.00M'],
  ['1', '1N'],
  ['#uuid "0f8fad5b-d9cb-469f-a165-70867728950e"', '#uuid "0F8FAD5B-D9CB-469F-A165-70867728950E"'],
  ['#my/tag {:x #{:a :b}}', '#my/tag {:x #{:b :a}}'],
  ['1/2', '2/4'],
  ['-3/6', '-1/2'],
  ['4/2', '2'],
];

/** Pairs EDN's `=` tells apart: a read of the second after a write of the first is NOT linearizable. */
const DIFFERENT: readonly (readonly [string, string])[] = [
  ['0.1M', '0.10000000000000001M'],
  ['\\a', '"a"'],
  [':foo', '"foo"'],
  [':foo', 'foo'],
  ['foo', '"foo"'],
  ['#{1 2}', '[1 2]'],
  ['{:a 1}', '{"a" 1}'],
  ['1', '1.0'],
  ['1', '1M'],
  ['#inst "2026-12-03T10:00:00Z"', '#inst "2026-12-03T10:00:00.001Z"'],
  ['#my/tag 1', '#other/tag 1'],
  ['1/2', '0.5'],
  ['1/2', '1/3'],
  ['1/2', '"1/2"'],
];

describe('mallory check compares EDN values as EDN does', () => {
  it.each(EQUAL)('a write of %s, then a read of %s: linearizable', async (written, read) => {
    const { code, stdout } = await check('equal.edn', writeThenRead(written, read));
    expect(stdout).toContain(': linearizable (cas-register');
    expect(code).toBe(0);
  });

  it.each(DIFFERENT)('a write of %s, then a read of %s: NOT linearizable', async (written, read) => {
    const { code, stdout } = await check('different.edn', writeThenRead(written, read));
    expect(stdout).toContain(': NOT linearizable (cas-register');
    expect(code).toBe(1);
  });

  it('explains in EDN spelling', async () => {
    const { stdout } = await check('spelling.edn', writeThenRead('#{:foo \\a 0.1M}', ':foo'));
    expect(stdout).toContain('the state is #{0.1M :foo \\a}, and read :foo by process 1');
  });
});

describe('mallory check compares JSON values by value', () => {
  const history = (written: string, read: string): string =>
    [
      `{"type":"invoke","f":"write","value":${written},"process":0}`,
      `{"type":"ok","f":"write","value":${written},"process":0}`,
      '{"type":"invoke","f":"read","value":null,"process":1}',
      `{"type":"ok","f":"read","value":${read},"process":1}`,
    ].join('\n');

  it('an object with its keys in another order is the same value', async () => {
    const { code } = await check(
      'keys.jsonl',
      history('{"a":1,"b":{"c":2,"d":3}}', '{"b":{"d":3,"c":2},"a":1}'),
    );
    expect(code).toBe(0);
  });

  it('an object with another value under a key is another value', async () => {
    const { code, stdout } = await check('other.jsonl', history('{"a":1,"b":2}', '{"b":2,"a":3}'));
    expect(stdout).toContain('NOT linearizable');
    expect(code).toBe(1);
  });
});

/**
 * Two keys, each a linearizable register, that read as one register are not: key 1 is read as 1
 * after key 2 was written 2. Jepsen's `independent` checker splits the history by key first
 * (jepsen-io/jepsen, jepsen/src/jepsen/independent.clj, `checker`).
 */
function tuples(readOfKey1: string): string {
  const tuple = (k: number, v: string): string => `#jepsen.independent.Tuple{:key ${k}, :value ${v}}`;
  return [
    `{:type :invoke, :f :write, :value ${tuple(1, '1')}, :process 0}`,
    `{:type :ok, :f :write, :value ${tuple(1, '1')}, :process 0}`,
    `{:type :invoke, :f :write, :value ${tuple(2, '2')}, :process 1}`,
    `{:type :ok, :f :write, :value ${tuple(2, '2')}, :process 1}`,
    `{:type :invoke, :f :read, :value ${tuple(1, 'nil')}, :process 2}`,
    `{:type :ok, :f :read, :value ${tuple(1, readOfKey1)}, :process 2}`,
    `{:type :info, :f :start, :value nil, :process :nemesis}`,
  ].join('\n');
}

describe('mallory check splits Jepsen independent histories by key', () => {
  it('checks each key as its own register: a linearizable history is linearizable', async () => {
    const { code, stdout } = await check('independent.edn', tuples('1'));
    expect(stdout).toContain(': linearizable (kv, 2 partitions, 3 ops');
    expect(code).toBe(0);
  });

  it('names the key that is not linearizable', async () => {
    const { code, stdout } = await check('independent-bad.edn', tuples('2'));
    expect(stdout).toContain(': NOT linearizable (kv, 2 partitions');
    expect(stdout).toContain('key 1: after 1 linearized ops the state is 1, and read [1 2] by process 2');
    expect(code).toBe(1);
  });
});

/**
 * Knossos's older test histories write one op a line as `[process type f value]` (e.g.
 * jepsen-io/knossos, data/cas-failure.edn at d1bc993, read by test/knossos/core_test.clj's
 * read-history); these are written to reproduce that shape.
 */
describe('mallory check reads Knossos op tuples', () => {
  const knossos = (read: string): string =>
    [
      '[0 :invoke :write 3]',
      '[1 :invoke :read nil]',
      '[0 :ok :write 3]',
      '[2 :invoke :cas [3 4]]',
      '[2 :ok :cas [3 4]]',
      `[1 :ok :read ${read}]`,
    ].join('\n');

  it('a linearizable one: exit 0', async () => {
    const { code, stdout } = await check('tuples.edn', knossos('4'));
    expect(stdout).toContain(': linearizable (cas-register, 1 partition, 3 ops');
    expect(code).toBe(0);
  });

  it('a read no order explains: exit 1, naming its line', async () => {
    const { code, stdout } = await check('tuples-bad.edn', knossos('5'));
    expect(stdout).toContain('NOT linearizable');
    expect(stdout).toContain('line 6');
    expect(code).toBe(1);
  });
});

describe('mallory check on JSON that readers disagree on or that JSON lacks', () => {
  const op = '{"type":"invoke","f":"write","process":0,"value":';

  it('refuses a key written twice, naming the line and the key: exit 2, one line', async () => {
    const { code, stdout, stderr } = await check(
      'twice.jsonl',
      `${op}1}\n{"type":"ok","type":"fail","f":"write","process":0,"value":1}\n`,
    );
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/twice\.jsonl:2: the key "type" appears twice in one object: keep one of them$/),
    ]);
    expect(stdout).toBe('');
    expect(code).toBe(2);
  });

  it('says NaN and Infinity are not JSON numbers: exit 2, one line', async () => {
    for (const literal of ['NaN', 'Infinity']) {
      const { code, stderr } = await check('nan.jsonl', `${op}${literal}}\n`);
      expect(stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `nan\\.jsonl:1: ${literal} is not a number JSON has: write null, or the value as a string`,
          ),
        ),
      ]);
      expect(code).toBe(2);
    }
  });
});
