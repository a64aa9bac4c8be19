import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { HistoryError, type Model, checkOpStream, checkOps } from '../../src/check/linearizable.js';
import { generateKvHistory } from './generate-history.js';

/** Builds a history from compact rows: [process, type, f, value]; index and time are positions. */
function history(...rows: readonly (readonly [number | 'nemesis', Op['type'], string, unknown])[]): Op[] {
  return rows.map(([process, type, f, value], index) => ({
    index,
    time: index * 1000,
    type,
    process,
    f,
    value,
  }));
}

describe('checkOps on a register', () => {
  it('accepts overlapping ops that can be ordered', async () => {
    const ops = history(
      [0, 'invoke', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
      [0, 'ok', 'write', 1],
    );
    const result = await checkOps(ops, { model: 'register' });
    expect(result).toMatchObject({ valid: true, partitions: 1, ops: 2, model: 'register' });
    expect(result.counterexample).toBeUndefined();
  });

  it('reads nil before any write as the initial value', async () => {
    const ops = history([0, 'invoke', 'read', null], [0, 'ok', 'read', null]);
    expect((await checkOps(ops, { model: 'cas-register' })).valid).toBe(true);
  });

  it('starts registers at `initial` when given (Knossos starts at 0), every key of kv too', async () => {
    const ops = history(
      [0, 'invoke', 'read', null],
      [0, 'ok', 'read', 0],
      [1, 'invoke', 'cas', [0, 1]],
      [1, 'ok', 'cas', [0, 1]],
    );
    expect((await checkOps(ops, { model: 'cas-register' })).valid).toBe(false);
    expect((await checkOps(ops, { model: 'cas-register', initial: 0 })).valid).toBe(true);
    const nilRead = history([0, 'invoke', 'read', null], [0, 'ok', 'read', null]);
    expect((await checkOps(nilRead, { model: 'register', initial: 0 })).valid).toBe(false);
    const kv = history(
      [0, 'invoke', 'read', ['a', null]],
      [0, 'ok', 'read', ['a', 'x']],
      [1, 'invoke', 'read', ['b', null]],
      [1, 'ok', 'read', ['b', 'x']],
    );
    const result = await checkOps(kv, { model: 'kv', initial: 'x' });
    expect(result).toMatchObject({ valid: true, partitions: 2 });
  });

  it('refuses `initial` for models that are not registers', async () => {
    const ops = history([0, 'invoke', 'add', 1], [0, 'ok', 'add', 1]);
    await expect(checkOps(ops, { model: 'counter', initial: 0 })).rejects.toThrow(
      /^checkOps: initial is for the register models \(register, cas-register, kv\), not counter/,
    );
  });

  it('rejects a stale read and names the op that cannot be placed', async () => {
    const ops = history(
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [0, 'invoke', 'write', 2],
      [0, 'ok', 'write', 2],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
    );
    const result = await checkOps(ops, { model: 'register' });
    expect(result.valid).toBe(false);
    expect(result.counterexample).toEqual({
      longestPrefix: [ops[1], ops[3]],
      failingOp: ops[5],
      stateBefore: '2',
    });
  });

  it('lets an info write take effect late, long after its invoke', async () => {
    const ops = history(
      [0, 'invoke', 'write', 1],
      [0, 'info', 'write', 'timeout'],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', null],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
    );
    expect((await checkOps(ops, { model: 'register' })).valid).toBe(true);
  });

  it('lets an info write never happen', async () => {
    const ops = history(
      [0, 'invoke', 'write', 1],
      [0, 'info', 'write', 'timeout'],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', null],
    );
    expect((await checkOps(ops, { model: 'register' })).valid).toBe(true);
  });

  it('treats an invoke with no completion as info', async () => {
    const ops = history([0, 'invoke', 'write', 7], [1, 'invoke', 'read', null], [1, 'ok', 'read', 7]);
    expect((await checkOps(ops, { model: 'register' })).valid).toBe(true);
  });

  it('still rejects an info op that would have to take effect before its invoke', async () => {
    const ops = history(
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
      [0, 'invoke', 'write', 1],
      [0, 'info', 'write', 'timeout'],
    );
    expect((await checkOps(ops, { model: 'register' })).valid).toBe(false);
  });

  it('ignores fail ops (they did not happen) and nemesis ops', async () => {
    const ops = history(
      ['nemesis', 'info', 'start-partition', 'majority'],
      [0, 'invoke', 'write', 1],
      [0, 'fail', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', null],
      ['nemesis', 'info', 'stop-partition', null],
    );
    const result = await checkOps(ops, { model: 'register' });
    expect(result).toMatchObject({ valid: true, ops: 1 });
  });

  it('applies a successful cas and rejects a read the cas could not have produced', async () => {
    const ok = history(
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [0, 'invoke', 'cas', [1, 2]],
      [0, 'ok', 'cas', [1, 2]],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 2],
    );
    expect((await checkOps(ok, { model: 'cas-register' })).valid).toBe(true);
    const bad = history([0, 'invoke', 'cas', [1, 2]], [0, 'ok', 'cas', [1, 2]]);
    const result = await checkOps(bad, { model: 'cas-register' });
    expect(result.valid).toBe(false);
    expect(result.counterexample?.stateBefore).toBe('nil');
  });

  it('refuses cas under the plain register model, saying which model to use', async () => {
    const ops = history([0, 'invoke', 'cas', [1, 2]], [0, 'ok', 'cas', [1, 2]]);
    await expect(checkOps(ops, { model: 'register' })).rejects.toThrow(/--model cas-register/);
  });

  it('throws HistoryError for ops that do not pair up, with the op position', async () => {
    const orphan = history([0, 'ok', 'read', 1]);
    await expect(checkOps(orphan, { model: 'register' })).rejects.toBeInstanceOf(HistoryError);
    const twice = history([0, 'invoke', 'read', null], [0, 'invoke', 'read', null]);
    const error = await checkOps(twice, { model: 'register' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HistoryError);
    expect((error as HistoryError).position).toBe(1);
    expect((error as HistoryError).message).toMatch(/still open/);
  });
});

describe('checkOps on kv (partitioned by key)', () => {
  it('checks keys independently and reports the failing key', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['a', 1]],
      [0, 'ok', 'write', ['a', 1]],
      [1, 'invoke', 'read', ['b', null]],
      [1, 'ok', 'read', ['b', null]],
      [0, 'invoke', 'cas', ['b', [null, 3]]],
      [0, 'ok', 'cas', ['b', [null, 3]]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', 2]],
    );
    const result = await checkOps(ops, { model: 'kv' });
    expect(result.valid).toBe(false);
    expect(result.partitions).toBe(2);
    expect(result.counterexample).toEqual({
      key: 'a',
      longestPrefix: [ops[1]],
      failingOp: ops[7],
      stateBefore: '1',
    });
  });

  it('is valid when every key is', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['a', 1]],
      [1, 'invoke', 'write', ['b', 2]],
      [1, 'ok', 'write', ['b', 2]],
      [0, 'ok', 'write', ['a', 1]],
      [2, 'invoke', 'read', ['b', null]],
      [2, 'ok', 'read', ['b', 2]],
    );
    expect(await checkOps(ops, { model: 'kv' })).toMatchObject({ valid: true, partitions: 2 });
  });

  it('rejects a value that is not [key, v]', async () => {
    const ops = history([0, 'invoke', 'write', 3]);
    await expect(checkOps(ops, { model: 'kv' })).rejects.toThrow(/\[key, value\]/);
  });
});

describe('checkOps on set and counter', () => {
  it('set: a read must return every element added before it and nothing never added', async () => {
    const base = history(
      [0, 'invoke', 'add', 1],
      [0, 'ok', 'add', 1],
      [1, 'invoke', 'add', 2],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', [1]],
      [1, 'ok', 'add', 2],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', [2, 1]],
    );
    expect((await checkOps(base, { model: 'set' })).valid).toBe(true);
    const lost = history(
      [0, 'invoke', 'add', 1],
      [0, 'ok', 'add', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', []],
    );
    const result = await checkOps(lost, { model: 'set' });
    expect(result.valid).toBe(false);
    expect(result.counterexample?.stateBefore).toBe('#{1}');
  });

  it('counter: reads see the adds that completed before them', async () => {
    const ops = history(
      [0, 'invoke', 'add', 2],
      [0, 'ok', 'add', 2],
      [1, 'invoke', 'add', 3],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', 5],
      [1, 'ok', 'add', 3],
    );
    expect((await checkOps(ops, { model: 'counter' })).valid).toBe(true);
    const bad = history(
      [0, 'invoke', 'add', 2],
      [0, 'ok', 'add', 2],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', 1],
    );
    expect((await checkOps(bad, { model: 'counter' })).valid).toBe(false);
  });
});

describe('checkOps with a model of its own and a time limit', () => {
  /** A queue: enqueue x, dequeue returns the oldest element (null when empty). States are arrays. */
  const queueModel: Model<readonly number[], { f: string; value: unknown }> = {
    name: 'queue',
    input: (f, value) => ({ f, value }),
    output: (_f, value) => value,
    init: () => [],
    step(state, input, output) {
      if (input.f === 'enqueue') return [...state, input.value as number];
      const head = state.length === 0 ? null : state[0];
      return output === undefined || output === head ? state.slice(1) : undefined;
    },
    hash: (state) => state.reduce((h, x) => Math.imul(h ^ x, 16777619), 2166136261),
    equal: (a, b) => a.length === b.length && a.every((x, i) => x === b[i]),
    describe: (state) => `[${state.join(' ')}]`,
  };

  it('checks against an adapter-defined model with object states', async () => {
    const fifo = history(
      [0, 'invoke', 'enqueue', 1],
      [0, 'ok', 'enqueue', 1],
      [0, 'invoke', 'enqueue', 2],
      [0, 'ok', 'enqueue', 2],
      [1, 'invoke', 'dequeue', null],
      [1, 'ok', 'dequeue', 2],
    );
    const result = await checkOps(fifo, { model: queueModel });
    expect(result.valid).toBe(false);
    expect(result.counterexample?.stateBefore).toBe('[1 2]');
  });

  it('answers unknown when the time limit runs out', async () => {
    // Many concurrent writes of 0, 1 and 2, and one reader seeing the value change once more than
    // there are writes: this cannot be, but the search must try the orders of the writes to know.
    const rowsWith = (writers: number): [number, Op['type'], string, unknown][] => {
      const rows: [number, Op['type'], string, unknown][] = [];
      for (let p = 0; p < writers; p++) rows.push([p, 'invoke', 'write', p % 3]);
      for (let seen = 0; seen <= writers; seen++)
        rows.push([writers, 'invoke', 'read', null], [writers, 'ok', 'read', seen % 3]);
      for (let p = 0; p < writers; p++) rows.push([p, 'ok', 'write', p % 3]);
      return rows;
    };
    const result = await checkOps(history(...rowsWith(18)), { model: 'register', timeLimitMs: 0 });
    expect(result.valid).toBe('unknown');
    expect(result.counterexample).toBeUndefined();
    const decided = await checkOps(history(...rowsWith(8)), { model: 'register', timeLimitMs: 60_000 });
    expect(decided.valid).toBe(false);
  });

  it('refutes at once a read of a value no op can produce, however many info ops surround it', async () => {
    const rows: [number, Op['type'], string, unknown][] = [];
    for (let p = 0; p < 40; p++) rows.push([p, 'invoke', 'write', p % 7], [p, 'info', 'write', null]);
    rows.push([100, 'invoke', 'write', 3], [100, 'ok', 'write', 3], [101, 'invoke', 'read', null]);
    rows.push([101, 'ok', 'read', 9], [102, 'invoke', 'read', null], [102, 'ok', 'read', 3]);
    const ops = history(...rows);
    const result = await checkOps(ops, { model: 'register', timeLimitMs: 10_000 });
    expect(result.valid).toBe(false);
    expect(result.counterexample).toEqual({ longestPrefix: [ops[81]], failingOp: ops[83], stateBefore: '3' });
  });
});

describe('checkOpStream', () => {
  it('checks an async stream of ops and names counterexample ops by stream position', async () => {
    const ops = history(
      ['nemesis', 'info', 'kill', 'n1'],
      [0, 'invoke', 'write', ['a', 1]],
      [0, 'ok', 'write', ['a', 1]],
      [1, 'invoke', 'read', ['a', null]],
      [1, 'ok', 'read', ['a', 2]],
    );
    async function* stream(): AsyncGenerator<Op> {
      for (const op of ops) {
        await Promise.resolve();
        yield op;
      }
    }
    const result = await checkOpStream(stream(), { model: 'kv' });
    expect(result).toMatchObject({ valid: false, partitions: 1, ops: 2 });
    expect(result.counterexample).toEqual({ key: 'a', longestPrefix: [2], failingOp: 4, stateBefore: '1' });
    expect(await checkOpStream(ops.slice(0, 3), { model: 'kv' })).toMatchObject({ valid: true });
  });
});

describe('checkOps on long histories with many info ops', () => {
  it('finds the info writes reads depend on without a blind search (30% info, one key)', async () => {
    for (const seed of [0, 1, 2]) {
      const ops = [
        ...generateKvHistory({ seed, ops: 20_000, clients: 12, keys: 1, infoRate: 0.3, values: 6 }),
      ];
      const result = await checkOps(ops, { model: 'kv', timeLimitMs: 20_000 });
      expect(result.valid).toBe(true);
      expect(result.cacheEntries).toBeLessThan(20 * ops.length);
    }
  });
});

describe('checkOps options', () => {
  it('rejects an unknown model, a negative time limit and a thread count below 1, saying what to pass', async () => {
    const ops = history([0, 'invoke', 'read', null], [0, 'ok', 'read', null]);
    await expect(checkOps(ops, { model: 'queue' as 'kv' })).rejects.toThrow(
      'checkOps: unknown model "queue": use one of register, cas-register, kv, string-kv, set, counter, or pass a Model',
    );
    await expect(checkOps(ops, { model: 'kv', timeLimitMs: -1 })).rejects.toThrow(/timeLimitMs must be/);
    await expect(checkOps(ops, { model: 'kv', threads: 0 })).rejects.toThrow(
      /threads must be an integer >= 1/,
    );
  });
});
