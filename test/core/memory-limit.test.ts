import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { HistoryBuilder } from '../../src/check/_internals/history-builder.js';
import { LinearizedSet } from '../../src/check/_internals/linearized-set.js';
import { MemoCache } from '../../src/check/_internals/memo-cache.js';
import {
  MemoryLimitReached,
  describeBytes,
  memoryLimitsFor,
  parseByteSize,
} from '../../src/core/memory-limit.js';
import type { PartitionData } from '../../src/check/_internals/partition.js';
import { searchPartition } from '../../src/check/_internals/search.js';
import { checkOps } from '../../src/check/linearizable.js';
import { modelByName } from '../../src/check/models/by-name.js';
import { generateKvHistory } from '../check/generate-history.js';

const MIB = 1024 ** 2;

/**
 * Writers of 0, 1 and 2, all concurrent, and a reader that sees the value change once more than
 * there are writes: not linearizable, and only trying the orders of the writes tells, so the
 * search memoizes configurations by the million.
 */
function hardHistory(writers: number): Op[] {
  const ops: Op[] = [];
  let index = 0;
  const op = (type: Op['type'], process: number, f: string, value: unknown): void => {
    ops.push({ index: index++, time: index, type, process, f, value });
  };
  for (let p = 0; p < writers; p++) op('invoke', p, 'write', p % 3);
  for (let seen = 0; seen <= writers; seen++) {
    op('invoke', writers, 'read', null);
    op('ok', writers, 'read', seen % 3);
  }
  for (let p = 0; p < writers; p++) op('ok', p, 'write', p % 3);
  return ops;
}

function partitionOf(ops: readonly Op[]): PartitionData {
  const builder = new HistoryBuilder(modelByName('register'));
  for (const o of ops) builder.add(o);
  return builder.finish()[0].data(true);
}

describe('the memory limit of a linearizability check', () => {
  it('reads sizes with units of 1024, and refuses what is not a size', () => {
    expect(parseByteSize('8g')).toBe(8 * 1024 ** 3);
    expect(parseByteSize('512MiB')).toBe(512 * MIB);
    expect(parseByteSize('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('4096')).toBe(4096);
    expect(parseByteSize(' 2 kb ')).toBe(2048);
    for (const bad of ['', 'lots', '8x', '-1g', '0', '1e9'])
      expect(() => parseByteSize(bad), bad).toThrow(/is not a size/);
    expect(describeBytes(12 * 1024 ** 3)).toBe('12.0 GiB');
    expect(describeBytes(512 * MIB)).toBe('512 MiB');
  });

  it('the memo tables never grow past their bound: the growth that would throws instead', () => {
    const maxBytes = 3 * MIB;
    const cache = new MemoCache(maxBytes);
    const set = new LinearizedSet(4096, 0);
    let added = 0;
    const fill = (): void => {
      for (let bit = 0; bit < 4096; bit++) {
        set.add(bit);
        for (let state = 0; state < 64; state++) {
          cache.add(set, state);
          added++;
          expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
        }
      }
    };
    expect(fill).toThrow(MemoryLimitReached);
    // It filled most of the bound before it gave up (a pool grows by less than double at the end).
    expect(cache.bytes).toBeGreaterThan(maxBytes / 2);
    expect(cache.size).toBeGreaterThanOrEqual(added);
  });

  it('a search whose memo tables reach the bound answers unknown (memory), and one within it decides', () => {
    const partition = partitionOf(hardHistory(18));
    const model = modelByName('register');
    const bounded = searchPartition(partition, model, Infinity, {
      memory: { cacheBytes: 4 * MIB, rssBytes: Infinity },
    });
    expect(bounded).toMatchObject({ valid: 'unknown', limit: 'memory' });
    const easy = partitionOf(hardHistory(6));
    expect(
      searchPartition(easy, model, Infinity, { memory: { cacheBytes: 4 * MIB, rssBytes: Infinity } }),
    ).toMatchObject({ valid: false });
    // Its time limit is told apart from its memory limit.
    expect(searchPartition(partition, model, performance.now())).toMatchObject({
      valid: 'unknown',
      limit: 'time',
    });
  });

  it('a search stops when the process holds more than the bound, whatever holds it', () => {
    const partition = partitionOf(hardHistory(18));
    const verdict = searchPartition(partition, modelByName('register'), Infinity, {
      memory: { cacheBytes: Infinity, rssBytes: 1 },
    });
    expect(verdict).toMatchObject({ valid: 'unknown', limit: 'memory' });
  });

  it('checkOps says which limit left the verdict unknown, and the bound it ran under', async () => {
    const hard = hardHistory(18);
    const limit = process.memoryUsage.rss() + 8 * MIB;
    const result = await checkOps(hard, { model: 'register', memoryLimitBytes: limit });
    expect(result).toMatchObject({ valid: 'unknown', unknownBecause: 'memory', memoryLimitBytes: limit });
    const timed = await checkOps(hard, { model: 'register', timeLimitMs: 0, memoryLimitBytes: Infinity });
    expect(timed.valid).toBe('unknown');
    expect(timed.unknownBecause).toBe('time');
    expect(timed.memoryLimitBytes).toBeUndefined();
    // A verdict the bound does not reach is the same as without it.
    const ops = [...generateKvHistory({ seed: 3, ops: 400, clients: 8, keys: 4, infoRate: 0.05 })];
    const free = await checkOps(ops, { model: 'kv', memoryLimitBytes: Infinity });
    const bounded = await checkOps(ops, { model: 'kv' });
    expect(bounded.valid).toBe(free.valid);
    expect(bounded.unknownBecause).toBeUndefined();
    await expect(checkOps(hard, { model: 'register', memoryLimitBytes: 0 })).rejects.toThrow(
      /memoryLimitBytes must be a number of bytes > 0, got 0/,
    );
  });

  it('shares what the process does not hold yet among the threads', () => {
    const rss = process.memoryUsage.rss();
    const limits = memoryLimitsFor(rss + 100 * MIB, 2);
    expect(limits.rssBytes).toBe(rss + 100 * MIB);
    // Each thread's tables get under half of the 100 MiB left: the rest is for other allocations.
    // (The resident set it subtracts may be a reading up to 20 ms old, a little below `rss`.)
    expect(limits.cacheBytes).toBeGreaterThan(40 * MIB);
    expect(limits.cacheBytes).toBeLessThan(50 * MIB);
    expect(memoryLimitsFor(Infinity, 2)).toEqual({ cacheBytes: Infinity, rssBytes: Infinity });
    expect(memoryLimitsFor(1, 1).cacheBytes).toBe(0);
  });
});
