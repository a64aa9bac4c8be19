import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { checkOps } from '../../src/check/linearizable.js';
import { relaxReads } from '../../src/check/sequential-reads.js';
import { generateKvHistory } from './generate-history.js';

/** Builds a kv history from compact rows: [process, type, f, [key, v]]; index and time are positions. */
function history(...rows: readonly (readonly [number, Op['type'], string, unknown])[]): Op[] {
  return rows.map(([process, type, f, value], index) => ({
    index,
    time: index * 1000,
    type,
    process,
    f,
    value,
  }));
}

async function verdicts(ops: readonly Op[]): Promise<{ linearizable: unknown; sequential: unknown }> {
  const linearizable = (await checkOps(ops, { model: 'kv' })).valid;
  const sequential = (await checkOps(ops, { model: 'kv', reads: 'sequential' })).valid;
  return { linearizable, sequential };
}

describe("sequential reads (a read may be stale, never older than its process's own last update)", () => {
  it('a stale read of another process write is not a violation', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      // Process 1 reads x = 1 after x = 2 was acknowledged: a follower that has not caught up.
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: true });
  });

  it('a read of a state older than its process last update began from is a violation', async () => {
    const ops = history(
      [1, 'invoke', 'write', ['x', 1]],
      [1, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      [0, 'invoke', 'write', ['x', 3]],
      [0, 'ok', 'write', ['x', 3]],
      // When process 0 began writing 3, x was already 2: 1 is older than anything it may see.
      [0, 'invoke', 'read', ['x', null]],
      [0, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: false });
  });

  it("a writer never misses its own acknowledged write: sequential consistency keeps each process's order", async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [1, 'invoke', 'write', ['x', 2]],
      [1, 'ok', 'write', ['x', 2]],
      // x was 1 when process 1 began writing 2, but having written 2 it must see 2 (or later).
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: false });
    const result = await checkOps(ops, { model: 'kv', reads: 'sequential' });
    expect(result.counterexample).toMatchObject({ key: 'x', stateBefore: '2' });
    expect(result.counterexample?.failingOp).toBe(ops[5]);
    expect(result.counterexample?.longestPrefix).toEqual([ops[1], ops[3]]);
    // Its own cas, on a single register: having set 2, it reads 1.
    const cas = history(
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'cas', [1, 2]],
      [1, 'ok', 'cas', [1, 2]],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
    );
    expect((await checkOps(cas, { model: 'cas-register', reads: 'sequential' })).valid).toBe(false);
    expect((await checkOps(cas.slice(0, 4), { model: 'cas-register', reads: 'sequential' })).valid).toBe(
      true,
    );
  });

  it('a writer may read its own write after a concurrent write ordered later (a follower not caught up)', async () => {
    const ops = history(
      [1, 'invoke', 'write', ['x', 2]],
      [0, 'invoke', 'write', ['x', 3]],
      [0, 'ok', 'write', ['x', 3]],
      [1, 'ok', 'write', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 2]],
      // Once caught up, x is 3: 3 was written after 2, and process 1 read between them.
      [2, 'invoke', 'read', ['x', null]],
      [2, 'ok', 'read', ['x', 3]],
    ).map((op, i) => (i >= 6 ? { ...op, final: true as const } : op));
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: true });
  });

  it('lost acknowledged writes are still a violation: their writer reads what was before them', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      // The node that acknowledged x = 1 and x = 2 crashed and forgot both: reads say nothing.
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', null]],
      [0, 'invoke', 'read', ['x', null]],
      [0, 'ok', 'read', ['x', null]],
    );
    const result = await checkOps(ops, { model: 'kv', reads: 'sequential' });
    expect(result.valid).toBe(false);
    // What it reports are the ops as given: process 0's read, not a relaxed copy.
    expect(result.counterexample?.failingOp).toBe(ops[7]);
  });

  it('a lost write seen only by processes that never wrote the key passes, unless a final read sees it', async () => {
    // Acknowledged x = 1 and x = 2 rolled back to nothing; only process 1, which never wrote x,
    // reads after: sequential consistency may order both writes after its reads.
    const rows = [
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', null]],
      [2, 'invoke', 'read', ['x', null]],
      [2, 'ok', 'read', ['x', null]],
    ] as const;
    expect(await verdicts(history(...rows))).toEqual({ linearizable: false, sequential: true });
    // The same last read made once the nodes caught up (a final read) must see x = 2.
    const ops = history(...rows).map((op, i) => (i >= 6 ? { ...op, final: true as const } : op));
    const result = await checkOps(ops, { model: 'kv', reads: 'sequential' });
    expect(result.valid).toBe(false);
    expect(result.counterexample?.failingOp).toBe(ops[7]);
  });

  it('a final read of the last acknowledged value passes under sequential reads', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
      [2, 'invoke', 'read', ['x', null]],
      [2, 'ok', 'read', ['x', 2]],
    ).map((op, i) => (i >= 6 ? { ...op, final: true as const } : op));
    expect((await checkOps(ops, { model: 'kv', reads: 'sequential' })).valid).toBe(true);
    expect(
      relaxReads(ops)
        .ops.slice(-2)
        .map((op) => op.process),
    ).toEqual([2, 2]);
  });

  it('a lost write shows through a later cas too', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [1, 'invoke', 'write', ['x', 2]],
      [1, 'ok', 'write', ['x', 2]],
      // x = 2 was lost: a cas from 1 succeeds.
      [2, 'invoke', 'cas', ['x', [1, 3]]],
      [2, 'ok', 'cas', ['x', [1, 3]]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: false });
  });

  it('a read of a value written only after it returned is a violation', async () => {
    const ops = history(
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 5]],
      [0, 'invoke', 'write', ['x', 5]],
      [0, 'ok', 'write', ['x', 5]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: false });
  });

  it('a failed update does not bound its process reads (it did not happen)', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [1, 'invoke', 'write', ['x', 2]],
      [1, 'ok', 'write', ['x', 2]],
      // Process 2's cas fails (x is 2, not 7); its follower still says 1 afterwards.
      [2, 'invoke', 'cas', ['x', [7, 8]]],
      [2, 'fail', 'cas', ['x', [7, 8]]],
      [2, 'invoke', 'read', ['x', null]],
      [2, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: true });
  });

  it('keys are independent: an update of another key does not bound a read', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      [1, 'invoke', 'write', ['y', 7]],
      [1, 'ok', 'write', ['y', 7]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(ops)).toEqual({ linearizable: false, sequential: true });
  });

  it("a process's reads of a key never go back, though each alone may be stale", async () => {
    const writes = [
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
    ] as const;
    // Process 1 read 2, then 1: x = 1 was overwritten before 2 was written, so it went back.
    const back = history(
      ...writes,
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(back)).toEqual({ linearizable: false, sequential: false });
    const result = await checkOps(back, { model: 'kv', reads: 'sequential' });
    expect(result.counterexample).toMatchObject({ key: 'x', stateBefore: '2' });
    expect(result.counterexample?.failingOp).toBe(back[7]);
    expect(result.counterexample?.longestPrefix).toEqual([back[1], back[3], back[5]]);
    // The same reads the other way round are only stale: 1, then 1, then 2.
    const forward = history(
      ...writes,
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 2]],
    );
    expect(await verdicts(forward)).toEqual({ linearizable: false, sequential: true });
    // Two processes may each see another order of nothing: 2 by one, 1 by another, afterwards.
    const twoProcesses = history(
      ...writes,
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 2]],
      [2, 'invoke', 'read', ['x', null]],
      [2, 'ok', 'read', ['x', 1]],
    );
    expect(await verdicts(twoProcesses)).toEqual({ linearizable: false, sequential: true });
  });

  it('a read of the initial value after a written one goes back; writes real time leaves unordered do not', async () => {
    const initial = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', null]],
    );
    expect(await verdicts(initial)).toEqual({ linearizable: false, sequential: false });
    // Writes of 1 and 2 overlap: either may have come first, so reading 2 then 1 may be going forward.
    const overlapping = history(
      [0, 'invoke', 'write', ['x', 1]],
      [2, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 1]],
      [2, 'ok', 'write', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
    );
    expect((await checkOps(overlapping, { model: 'kv', reads: 'sequential' })).valid).toBe(true);
    // A value written twice has no one time and is not judged.
    const twice = history(
      [0, 'invoke', 'write', ['x', 1]],
      [0, 'ok', 'write', ['x', 1]],
      [0, 'invoke', 'write', ['x', 2]],
      [0, 'ok', 'write', ['x', 2]],
      [2, 'invoke', 'write', ['x', 1]],
      [2, 'ok', 'write', ['x', 1]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 2]],
      [1, 'invoke', 'read', ['x', null]],
      [1, 'ok', 'read', ['x', 1]],
    );
    expect((await checkOps(twice, { model: 'kv', reads: 'sequential' })).valid).toBe(true);
  });

  it('single registers too: a cas writes its new value', async () => {
    const ops: Op[] = [
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [0, 'invoke', 'cas', [1, 2]],
      [0, 'ok', 'cas', [1, 2]],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 2],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
    ].map(([process, type, f, value], index) => ({
      index,
      time: index * 1000,
      process: process as number,
      type: type as Op['type'],
      f: f as string,
      value,
    }));
    expect((await checkOps(ops, { model: 'cas-register', reads: 'sequential' })).valid).toBe(false);
    expect((await checkOps(ops.slice(0, 6), { model: 'cas-register', reads: 'sequential' })).valid).toBe(
      true,
    );
  });

  it('is refused for models that are not registers', async () => {
    await expect(checkOps([], { model: 'set', reads: 'sequential' })).rejects.toThrow(
      /sequential reads are for the register models/,
    );
  });

  it('never rejects a history that is linearizable (it only relaxes)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 10_000 }), async (seed) => {
        const ops = [...generateKvHistory({ seed, clients: 4, ops: 60, keys: 2, uniqueValues: true })];
        const linearizable = (await checkOps(ops, { model: 'kv' })).valid;
        const sequential = (await checkOps(ops, { model: 'kv', reads: 'sequential' })).valid;
        if (linearizable === true) expect(sequential).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps every op, each process one op at a time except its moved reads', () => {
    const ops = [...generateKvHistory({ seed: 3, clients: 3, ops: 40, keys: 2 })];
    const relaxed = relaxReads(ops);
    expect(relaxed.ops).toHaveLength(ops.length);
    expect(new Set(relaxed.origin)).toEqual(new Set(ops));
    // Every read line (invoke and completion) moved to a process of its own, nothing else.
    const moved = relaxed.ops.filter((op) => typeof op.process === 'number' && op.process < 0);
    expect(moved.length).toBe(ops.filter((op) => op.f === 'read').length);
    expect(moved.every((op) => op.f === 'read')).toBe(true);
  });
});
