import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { REPO_ROOT } from './data-dir.js';
import { generateKvHistory } from './generate-history.js';

type Linearizable = typeof import('../../src/check/linearizable.js');

const COMPILED = path.join(REPO_ROOT, 'dist', 'check', 'linearizable.js');

/** Worker threads start the compiled worker, so this runs the compiled checker (`npm test` builds). */
async function compiled(): Promise<Linearizable> {
  if (!existsSync(COMPILED)) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  return (await import(pathToFileURL(COMPILED).href)) as Linearizable;
}

describe('checkOps on worker threads', () => {
  it('rebuilds registers starting at `initial` in the workers', async () => {
    const { checkOps } = await compiled();
    const keys = ['a', 'b', 'c', 'd'];
    const ops = keys.flatMap((key, i) => [
      { index: 2 * i, time: 2 * i, type: 'invoke' as const, process: i, f: 'read', value: [key, null] },
      { index: 2 * i + 1, time: 2 * i + 1, type: 'ok' as const, process: i, f: 'read', value: [key, 0] },
    ]);
    expect((await checkOps(ops, { model: 'kv', threads: 2 })).valid).toBe(false);
    expect((await checkOps(ops, { model: 'kv', threads: 2, initial: 0 })).valid).toBe(true);
  });

  it('gives the same verdict and counterexample on 2 threads as on 1', async () => {
    const { checkOps } = await compiled();
    const ops = [...generateKvHistory({ seed: 7, ops: 4000, clients: 8, keys: 6, infoRate: 0.02 })];
    const one = await checkOps(ops, { model: 'kv', threads: 1 });
    const two = await checkOps(ops, { model: 'kv', threads: 2 });
    expect(one.valid).toBe(true);
    expect(two).toMatchObject({ valid: true, partitions: 6, ops: one.ops, cacheEntries: one.cacheEntries });

    const reads = ops.flatMap((op, i) => (op.type === 'ok' && op.f === 'read' ? [i] : []));
    const corrupted = new Set([reads[100], reads[reads.length - 50]]);
    const bad = ops.map((op, i) =>
      corrupted.has(i) ? { ...op, value: [(op.value as [string])[0], 99] } : op,
    );
    const badOne = await checkOps(bad, { model: 'kv', threads: 1 });
    const badTwo = await checkOps(bad, { model: 'kv', threads: 2 });
    expect(badOne.valid).toBe(false);
    expect(badTwo.valid).toBe(false);
    expect(badTwo.counterexample).toEqual(badOne.counterexample);
  });
});
