import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HistoryError } from '../../../src/check/history/history-error.js';
import { parseHistory, readHistoryFile } from '../../../src/check/history/read-history.js';
import { checkOps } from '../../../src/check/linearizable.js';

describe('parseHistory', () => {
  it('tells the three formats apart by content', () => {
    expect(parseHistory('{"type":"invoke","process":0,"f":"read"}\n', 'a').format).toBe('jsonl');
    expect(parseHistory('{:type :invoke, :process 0, :f :read}\n', 'a').format).toBe('edn');
    expect(parseHistory('\n[{:type :invoke, :process 0, :f :read}]', 'a').format).toBe('edn');
    expect(parseHistory('INFO  jepsen.util - 0\t:invoke\t:read\tnil\n', 'a').format).toBe('jepsen-log');
  });

  it('tells JSON arrays, history.txt and later Jepsen log layouts apart too', () => {
    const format = (text: string): string => parseHistory(text, 'a').format;
    expect(format('[{"type":"invoke","process":0,"f":"read"}]')).toBe('json');
    expect(format('\n[\n  {\n    "type": "invoke", "process": 0, "f": "read"\n  }\n]\n')).toBe('json');
    expect(format('[{:type :invoke, :process 0, :f :read}]')).toBe('edn');
    expect(format('0\t:invoke\t:read\tnil\n')).toBe('jepsen-txt');
    expect(format(':nemesis\t:info\t:start\tnil\n0\t:invoke\t:read\tnil\n')).toBe('jepsen-txt');
    expect(format('INFO [2017-03-30 15:28:17,423] jepsen worker 2 - jepsen.util 2  :invoke :read nil')).toBe(
      'jepsen-log',
    );
    expect(format('[jepsen worker 3] jepsen.util: 3  :ok  :read  {:a 1}')).toBe('jepsen-log');
    expect(
      format(
        'INFO [2017-01-01] main - jepsen.cli Test options:\n {:nodes []}\n2\t...\nINFO  jepsen.util - 0\t:invoke\t:read\tnil',
      ),
    ).toBe('jepsen-log');
  });

  it('names the file for empty or unrecognisable input', () => {
    expect(() => parseHistory('  \n', 'e.txt')).toThrow(/^e\.txt:1: the file is empty/);
    expect(() => parseHistory('\n\nhello world', 'w.txt')).toThrow(
      /^w\.txt:3: not a history: expected history\.jsonl \(a JSON op a line\), a JSON array of ops, history\.edn \(EDN op maps\), Jepsen's history\.txt/,
    );
  });

  it('reads a file, and names a file it cannot read', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mallory-read-'));
    try {
      const file = path.join(dir, 'history.jsonl');
      await writeFile(file, '{"type":"invoke","process":0,"f":"read"}\n');
      expect((await readHistoryFile(file)).ops).toHaveLength(1);
      await expect(readHistoryFile(path.join(dir, 'missing.jsonl'))).rejects.toThrow(
        /missing\.jsonl: cannot read/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('readHistoryFile on bytes that are not UTF-8', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mallory-utf8-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function write(name: string, ...parts: (string | readonly number[])[]): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(
      file,
      Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Uint8Array.from(p)))),
    );
    return file;
  }

  it('refuses them, naming the line, where decoding them as U+FFFD would merge keys \\xff and \\xfe', async () => {
    const op = (
      type: string,
      f: string,
      key: readonly number[],
      v: string,
    ): (string | readonly number[])[] => [
      `{"type":"${type}","process":${f === 'write' ? 0 : 1},"f":"${f}","value":["k`,
      key,
      `",${v}]}\n`,
    ];
    const file = await write(
      'merged.jsonl',
      '{"type":"invoke","process":2,"f":"write","value":["é",1]}\n{"type":"ok","process":2,"f":"write","value":["é",1]}\n',
      ...op('invoke', 'write', [0xff], '1'),
      ...op('ok', 'write', [0xff], '1'),
      ...op('invoke', 'read', [0xfe], 'null'),
      ...op('ok', 'read', [0xfe], '1'),
    );
    const lossy = parseHistory((await readFile(file)).toString('utf8'), file);
    expect((await checkOps(lossy.ops, { model: 'kv' })).valid).toBe(true);
    const error: unknown = await readHistoryFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HistoryError);
    expect((error as Error).message).toBe(`${file}:3: not UTF-8: save the history as UTF-8 text`);
  });

  it('names the last line for a sequence cut off at the end, and reads a file with a BOM', async () => {
    const cut = await write(
      'cut.edn',
      '{:type :invoke, :f :read, :process 0}\n{:type :ok, :f :read, :value "',
      [0xe2, 0x82],
    );
    await expect(readHistoryFile(cut)).rejects.toThrow(`${cut}:2: not UTF-8`);
    const bom = await write(
      'bom.jsonl',
      [0xef, 0xbb, 0xbf],
      '{"type":"invoke","process":0,"f":"read","value":"€"}\n',
    );
    expect((await readHistoryFile(bom)).ops[0].value).toBe('€');
  });
});
