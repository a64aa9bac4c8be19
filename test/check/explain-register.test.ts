import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { checkOps } from '../../src/check/linearizable.js';
import { explainRegisterViolation } from '../../src/check/explain-register.js';

type Row = readonly [process: number, type: Op['type'], f: string, value: unknown, node?: string];

/** Ops of key "k" one second apart, so every row is its own point in real time. */
function history(rows: readonly Row[]): Op[] {
  return rows.map(([process, type, f, value, node], index) => ({
    index,
    time: (index + 1) * 1e9,
    type,
    process,
    f,
    value: ['k', value],
    ...(node ? { node } : {}),
  }));
}

/** What the real checker reports for the history, explained. */
async function explain(rows: readonly Row[]) {
  const ops = history(rows);
  const result = await checkOps(ops, { model: 'kv' });
  expect(result.valid).toBe(false);
  return explainRegisterViolation(ops, result.counterexample!.failingOp);
}

describe('explainRegisterViolation names the anomaly with the ops that prove it', () => {
  it('lost write: acknowledged, never read, and a later read returns the older value', async () => {
    const e = await explain([
      [0, 'invoke', 'write', 1, 'n1'],
      [0, 'ok', 'write', 1, 'n1'],
      [1, 'invoke', 'write', 2, 'n2'],
      [1, 'ok', 'write', 2, 'n2'],
      [2, 'invoke', 'read', null, 'n3'],
      [2, 'ok', 'read', 1, 'n3'],
    ]);
    expect(e.anomaly).toBe('lost-write');
    expect(e.message).toMatch(
      /^write 2 by process 1 on n2 \(3\.000 s–4\.000 s\) was acknowledged and never read; read 1 by process 2 on n3/,
    );
    expect(e.ops).toEqual([3, 5]);
  });

  it('stale read: others saw the newer value, this read did not', async () => {
    const e = await explain([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'write', 2],
      [1, 'ok', 'write', 2],
      [3, 'invoke', 'read', null],
      [3, 'ok', 'read', 2],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', 1],
    ]);
    // The read of 2 completes before the read of 1 begins: that is "went back in time".
    expect(e.anomaly).toBe('resurrected');
    const overlapping = await explain([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'write', 2],
      [1, 'ok', 'write', 2],
      [3, 'invoke', 'read', null],
      [2, 'invoke', 'read', null],
      [2, 'ok', 'read', 1],
      [3, 'ok', 'read', 2],
    ]);
    expect(overlapping.anomaly).toBe('stale-read');
    expect(overlapping.message).toMatch(
      /returned the older 1 although write 2 .* was acknowledged before it began \(read by read 2/,
    );
  });

  it('stale read of the initial value after an acknowledged write', async () => {
    const e = await explain([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', null],
    ]);
    expect(e.anomaly).toBe('lost-write');
    expect(e.message).toMatch(/returned the initial value$/);
  });

  it('never written, and read of a failed write', async () => {
    expect(
      (
        await explain([
          [0, 'invoke', 'write', 1],
          [0, 'ok', 'write', 1],
          [1, 'invoke', 'read', null],
          [1, 'ok', 'read', 7],
        ])
      ).anomaly,
    ).toBe('never-written');
    const failed = await explain([
      [0, 'invoke', 'write', 1],
      [0, 'fail', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
    ]);
    expect(failed.anomaly).toBe('failed-write-read');
    expect(failed.ops).toEqual([3, 1]);
  });

  it('what it cannot name is unexplained, never a guess', async () => {
    const e = await explain([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'cas', [2, 3]],
      [1, 'ok', 'cas', [2, 3]],
    ]);
    expect(e.anomaly).toBe('unexplained');
  });
});

describe('explainRegisterViolation with an initial value', () => {
  it('calls a read of the initial value the initial value, not a value no op wrote', async () => {
    const ops = history([
      [0, 'invoke', 'write', 1],
      [0, 'ok', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 0],
    ]);
    const result = await checkOps(ops, { model: 'kv', initial: 0 });
    expect(result.valid).toBe(false);
    const e = explainRegisterViolation(ops, result.counterexample!.failingOp, 0);
    expect(e.anomaly).toBe('lost-write');
    expect(e.message).toContain('returned the initial value');
    expect(explainRegisterViolation(ops, result.counterexample!.failingOp).anomaly).toBe('never-written');
  });
});
