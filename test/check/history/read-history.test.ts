import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseHistory, readHistoryFile } from '../../../src/check/history/read-history.js';

describe('parseHistory', () => {
  it('tells the three formats apart by content', () => {
    expect(parseHistory('{"type":"invoke","process":0,"f":"read"}\n', 'a').format).toBe('jsonl');
    expect(parseHistory('{:type :invoke, :process 0, :f :read}\n', 'a').format).toBe('edn');
    expect(parseHistory('\n[{:type :invoke, :process 0, :f :read}]', 'a').format).toBe('edn');
    expect(parseHistory('INFO  jepsen.util - 0\t:invoke\t:read\tnil\n', 'a').format).toBe('jepsen-log');
  });

  it('names the file for empty or unrecognisable input', () => {
    expect(() => parseHistory('  \n', 'e.txt')).toThrow(/^e\.txt:1: the file is empty/);
    expect(() => parseHistory('\n\nhello world', 'w.txt')).toThrow(/^w\.txt:3: not a history/);
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
