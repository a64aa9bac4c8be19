import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { Rng } from '../../src/core/random.js';
import { checkOps } from '../../src/check/linearizable.js';
import { modelByName } from '../../src/check/models/by-name.js';
import { bruteForceLinearizable } from './brute-force.js';
import { generateKvHistory } from './generate-history.js';

const PROPERTY_RUNS = 150;

/** Rewrites the value of the `which`-th ok read (modulo their count) with `replace`. */
function corruptRead(ops: readonly Op[], which: number, replace: (v: unknown) => unknown): Op[] | undefined {
  const reads = ops.flatMap((op, i) => (op.type === 'ok' && op.f === 'read' ? [i] : []));
  if (reads.length === 0) return undefined;
  const at = reads[which % reads.length];
  return ops.map((op, i) => (i === at ? { ...op, value: replace(op.value) } : op));
}

const kvHistory = fc.record({
  seed: fc.integer({ min: 0, max: 0x7fffffff }),
  ops: fc.integer({ min: 1, max: 200 }),
  clients: fc.integer({ min: 1, max: 12 }),
  keys: fc.integer({ min: 1, max: 4 }),
  values: fc.integer({ min: 1, max: 6 }),
  infoRate: fc.constantFrom(0, 0.02, 0.05),
});

describe('linearizability properties', () => {
  it('a history of a real sequential execution with overlapping intervals is linearizable', async () => {
    await fc.assert(
      fc.asyncProperty(kvHistory, async (options) => {
        const ops = [...generateKvHistory(options)];
        const result = await checkOps(ops, { model: 'kv' });
        expect(result.valid).toBe(true);
        const single = [...generateKvHistory({ ...options, keys: 1, kv: false })];
        expect((await checkOps(single, { model: 'cas-register' })).valid).toBe(true);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('a read of a value nobody wrote is never linearizable', async () => {
    await fc.assert(
      fc.asyncProperty(kvHistory, fc.nat(), async (options, which) => {
        const ops = [...generateKvHistory(options)];
        const bad = corruptRead(ops, which, (v) => [(v as [string, unknown])[0], 1_000_000]);
        fc.pre(bad !== undefined);
        const result = await checkOps(bad, { model: 'kv' });
        expect(result.valid).toBe(false);
        expect(result.counterexample?.failingOp.f).toBe('read');
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('kv is valid exactly when every key, checked alone as a cas-register, is', async () => {
    await fc.assert(
      fc.asyncProperty(kvHistory, fc.nat(), fc.boolean(), async (options, which, corrupt) => {
        const generated = [...generateKvHistory({ ...options, ops: Math.min(options.ops, 120) })];
        const ops = corrupt
          ? (corruptRead(generated, which, (v) => [(v as [string])[0], which % 4]) ?? generated)
          : generated;
        const keys = [...new Set(ops.map((op) => (op.value as [string])[0]))];
        const perKey = await Promise.all(
          keys.map((key) =>
            checkOps(
              ops
                .filter((op) => (op.value as [string])[0] === key)
                .map((op) => ({ ...op, value: (op.value as [string, unknown])[1] })),
              { model: 'cas-register' },
            ),
          ),
        );
        const result = await checkOps(ops, { model: 'kv' });
        expect(result.partitions).toBe(keys.length);
        expect(result.valid).toBe(perKey.every((r) => r.valid === true));
        if (result.valid === false) {
          const failing = keys.findIndex((_, i) => perKey[i].valid === false);
          expect(result.counterexample?.key).toBe(keys[failing]);
        }
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('a read changed to another written value is mostly not linearizable', async () => {
    let invalid = 0;
    let tried = 0;
    const rng = new Rng(20261129);
    for (let i = 0; i < 200; i++) {
      const ops = [
        ...generateKvHistory({ seed: rng.nextU32(), ops: 60, clients: 4, keys: 1, values: 5, kv: false }),
      ];
      const bad = corruptRead(ops, rng.nextU32(), (v) =>
        v === null ? 0 : ((v as number) + 1 + rng.int(3)) % 5,
      );
      if (bad === undefined) continue;
      tried++;
      if ((await checkOps(bad, { model: 'cas-register' })).valid === false) invalid++;
    }
    expect(tried).toBeGreaterThan(150);
    expect(invalid / tried).toBeGreaterThan(0.6);
  });

  it('agrees with a brute-force search on small random histories', async () => {
    const model = modelByName('cas-register');
    const smallHistory = fc.record({
      processes: fc.integer({ min: 1, max: 5 }),
      steps: fc.array(
        fc.record({
          process: fc.nat(4),
          f: fc.constantFrom('read', 'write', 'cas'),
          a: fc.constantFrom(null, 0, 1, 2),
          b: fc.constantFrom(0, 1, 2),
          outcome: fc.constantFrom('ok', 'ok', 'ok', 'info', 'fail', 'pending'),
        }),
        { maxLength: 16 },
      ),
    });
    let disagreements = 0;
    let invalidSeen = 0;
    let validSeen = 0;
    await fc.assert(
      fc.asyncProperty(smallHistory, fc.nat(), async ({ processes, steps }, interleaving) => {
        // Each step is invoked, and its completion is emitted later, after up to 3 other events.
        const ops: Op[] = [];
        const open = new Map<number, { f: string; value: unknown; outcome: string; readValue: unknown }>();
        const rng = new Rng(interleaving);
        const emit = (op: Omit<Op, 'index' | 'time'>): void => {
          ops.push({ ...op, index: ops.length, time: ops.length });
        };
        // A pending op never completes: like Jepsen, its client goes on under a new process id.
        const actual = new Map<number, number>();
        const complete = (process: number): void => {
          const o = open.get(process)!;
          open.delete(process);
          if (o.outcome === 'pending') {
            actual.set(process, (actual.get(process) ?? process) + 100);
            return;
          }
          const value = o.f === 'read' && o.outcome === 'ok' ? o.readValue : o.value;
          emit({ type: o.outcome as Op['type'], process: actual.get(process) ?? process, f: o.f, value });
        };
        for (const step of steps) {
          const process = step.process % processes;
          if (open.has(process)) complete(process);
          const value = step.f === 'read' ? null : step.f === 'write' ? step.b : [step.a, step.b];
          emit({ type: 'invoke', process: actual.get(process) ?? process, f: step.f, value });
          open.set(process, { f: step.f, value, outcome: step.outcome, readValue: step.a });
          if (rng.chance(0.3)) complete(rng.pick([...open.keys()]));
        }
        for (const process of [...open.keys()]) complete(process);
        const expected = bruteForceLinearizable(ops, model);
        const result = await checkOps(ops, { model: 'cas-register' });
        if (result.valid !== expected) disagreements++;
        if (expected) validSeen++;
        else invalidSeen++;
        expect(result.valid).toBe(expected);
      }),
      { numRuns: 500 },
    );
    expect(disagreements).toBe(0);
    expect(validSeen).toBeGreaterThan(20);
    expect(invalidSeen).toBeGreaterThan(20);
  });
});
