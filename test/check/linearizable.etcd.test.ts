import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { readHistoryFile } from '../../src/check/history/read-history.js';
import { checkOps } from '../../src/check/linearizable.js';
import { sharedDataDir } from './data-dir.js';

const ETCD_DIR = path.join(sharedDataDir(), 'porcupine-etcd');
const EXPECTED = readFileSync(path.join(ETCD_DIR, 'expected.csv'), 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((row) => row.split(',') as [file: string, verdict: string]);

describe('checkOps on the 102 Jepsen etcd histories published with Porcupine', () => {
  it('has the whole data set', () => {
    expect(EXPECTED).toHaveLength(102);
    expect(EXPECTED.filter(([, verdict]) => verdict === 'linearizable')).toHaveLength(23);
  });

  it.each(EXPECTED)('%s is %s', async (file, verdict) => {
    const history = await readHistoryFile(path.join(ETCD_DIR, file));
    const result = await checkOps(history.ops, { model: 'cas-register', timeLimitMs: 20_000 });
    expect(result.valid).toBe(verdict === 'linearizable');
    expect(result.partitions).toBe(1);
    if (result.valid === false) {
      const example = result.counterexample!;
      expect(history.ops).toContain(example.failingOp);
      expect(example.longestPrefix).not.toContain(example.failingOp);
      expect(example.stateBefore).toMatch(/^(nil|\d+)$/);
    } else {
      expect(result.counterexample).toBeUndefined();
    }
  });
});
