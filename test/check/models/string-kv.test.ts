import { describe, expect, it } from 'vitest';

import { checkOps } from '../../../src/check/linearizable.js';
import { stringKvModel as m } from '../../../src/check/models/string-kv.js';
import { parseHistory } from '../../../src/check/history/read-history.js';
import { defaultModel } from '../../../src/check/history/default-model.js';

/** Ops as Porcupine's key-value test data writes them: one EDN map a line, the key a field of its own. */
function porcupine(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join('');
}

function op(process: number, type: string, f: string, key: string, value: string | null): string {
  return `{:process ${process}, :type :${type}, :f :${f}, :key "${key}", :value ${value === null ? 'nil' : JSON.stringify(value)}}`;
}

describe('stringKvModel (Porcupine key-value: get, put, append)', () => {
  it('starts every key as the empty string; put replaces it, append adds to its end, get reads it', () => {
    const put = m.step(m.init(), m.input('put', ['k', 'ab']), undefined)!;
    const appended = m.step(put, m.input('append', ['k', 'cd']), undefined)!;
    expect(appended).toBe('abcd');
    expect(m.step(appended, m.input('get', ['k', null]), m.output('get', ['k', 'abcd']))).toBe('abcd');
    expect(m.step(appended, m.input('get', ['k', null]), m.output('get', ['k', 'ab']))).toBeUndefined();
    expect(m.step(m.init(), m.input('get', ['k', null]), m.output('get', ['k', '']))).toBe('');
    expect(m.partitionKey!('get', ['k', null])).toBe('k');
  });

  it('refuses an op with no key, a value that is not a string, an f it does not know', () => {
    expect(() => m.input('get', null)).toThrow(/needs a key/);
    expect(() => m.input('put', ['k', 3])).toThrow(/put value must be a string, got 3/);
    expect(() => m.input('read', ['k', null])).toThrow(/knows get, put, append; got f=read/);
  });
});

describe('Porcupine key-value histories', () => {
  it('reads the :key field into the value and is the model guessed for get/put/append', () => {
    const history = parseHistory(
      porcupine([op(0, 'invoke', 'put', '1', 'a'), op(0, 'ok', 'put', '1', 'a')]),
      'kv.txt',
    );
    expect(history.ops[0].value).toEqual(['1', 'a']);
    expect(defaultModel(history)).toBe('string-kv');
  });

  it('judges concurrent appends by every order they could take effect in', async () => {
    const lines = [
      op(0, 'invoke', 'append', 'x', 'a'),
      op(1, 'invoke', 'append', 'x', 'b'),
      op(0, 'ok', 'append', 'x', 'a'),
      op(1, 'ok', 'append', 'x', 'b'),
      op(2, 'invoke', 'get', 'x', null),
      op(2, 'ok', 'get', 'x', 'ba'),
      op(3, 'invoke', 'get', 'y', null),
      op(3, 'ok', 'get', 'y', ''),
    ];
    const ok = await checkOps(parseHistory(porcupine(lines), 'ok.txt').ops, { model: 'string-kv' });
    expect(ok).toMatchObject({ valid: true, partitions: 2 });
    // A get after both appends completed cannot see one of them only.
    const bad = lines.map((line) => line.replace(':value "ba"', ':value "b"'));
    const result = await checkOps(parseHistory(porcupine(bad), 'bad.txt').ops, { model: 'string-kv' });
    expect(result.valid).toBe(false);
    expect(result.counterexample).toMatchObject({ key: 'x', stateBefore: '"ab"' });
  });

  it('answers NOT linearizable from the key that fails at once, not waiting on a key whose search is long', async () => {
    // Key "slow": 11 concurrent appends, then a get no order of them gives: 11! orders to rule out.
    const slow: string[] = [];
    for (let p = 0; p < 11; p++) slow.push(op(p, 'invoke', 'append', 'slow', String.fromCharCode(97 + p)));
    for (let p = 0; p < 11; p++) slow.push(op(p, 'ok', 'append', 'slow', String.fromCharCode(97 + p)));
    slow.push(op(20, 'invoke', 'get', 'slow', null), op(20, 'ok', 'get', 'slow', 'z'));
    // Key "fast": a get that misses an acknowledged put.
    const fast = [
      op(30, 'invoke', 'put', 'fast', 'v'),
      op(30, 'ok', 'put', 'fast', 'v'),
      op(31, 'invoke', 'get', 'fast', null),
      op(31, 'ok', 'get', 'fast', ''),
    ];
    const result = await checkOps(parseHistory(porcupine([...slow, ...fast]), 'mixed.txt').ops, {
      model: 'string-kv',
    });
    expect(result).toMatchObject({ valid: false, partitions: 2, undecidedPartitions: 1 });
    expect(result.counterexamples?.map((c) => c.key)).toEqual(['fast']);
  });
});
