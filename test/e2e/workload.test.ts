import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { monoNs, sleep } from '../../src/core/clock.js';
import type { Op } from '../../src/core/op.js';
import { Rng } from '../../src/core/random.js';
import { History } from '../../src/workload/history.js';
import { RegisterWorkload } from '../../src/workload/register.js';
import { type KvraftCluster, startKvraft } from './helpers.js';

const NODES = ['n1', 'n2', 'n3'];
const CONCURRENCY = 6;

describe('register workload against real kvraft nodes', () => {
  const ops: Op[] = [];
  let kv: KvraftCluster;
  let workload: RegisterWorkload;
  let stoppedAt = 0;
  let finalRead = 0;

  beforeAll(async () => {
    kv = await startKvraft(NODES, 3);
    const { system, cluster } = kv;
    const history = new History(monoNs(), (op) => ops.push(op));
    workload = new RegisterWorkload(system, cluster, history, new Rng(3), {
      concurrency: CONCURRENCY,
      rate: 200,
      timeoutMs: 300,
      keys: 3,
      opsPerKey: 40,
      cas: true,
    });
    workload.start('t');
    await sleep(1500);
    await cluster.pause('n2'); // its workers' ops time out: info, then a new process id
    await sleep(1500);
    await cluster.resume('n2');
    await sleep(500);
    await workload.stop();
    stoppedAt = ops.length;
    finalRead = await workload.finalReads(5_000);
  }, 60_000);

  afterAll(async () => {
    await kv.close();
  });

  it('records every invocation with exactly one completion, in Jepsen shape and index order', () => {
    expect(stoppedAt).toBeGreaterThan(200);
    ops.forEach((op, i) => {
      expect(op.index).toBe(i);
    });
    const open = new Map<number | string, Op>();
    for (const op of ops) {
      if (op.type === 'invoke') {
        expect(open.has(op.process)).toBe(false);
        open.set(op.process, op);
      } else {
        const inv = open.get(op.process);
        expect(inv?.f).toBe(op.f);
        open.delete(op.process);
      }
    }
    expect(open.size).toBe(0); // stop() waits for every op in flight
    expect(workload.counts.ok).toBeGreaterThan(100);
  });

  it('turns timeouts on a paused node into info and never reuses that process id', () => {
    const infos = ops.filter((op) => op.type === 'info');
    expect(infos.length).toBeGreaterThan(0);
    // n2's own workers time out; others may too when n2 leads (their node forwards to it)
    expect(infos.some((op) => op.node === 'n2')).toBe(true);
    for (const info of infos) {
      expect(ops.some((op) => op.process === info.process && op.index > info.index)).toBe(false);
    }
    // the worker carries on under process + concurrency (unless the run ended right after)
    const continued = infos.filter((info) =>
      ops.some((op) => op.process === (info.process as number) + CONCURRENCY),
    );
    expect(continued.length).toBeGreaterThan(0);
  });

  it('uses fresh keys under the prefix, retires them after their op budget, and writes unique values', () => {
    const keys = new Set(ops.map((op) => (op.value as [string, unknown])[0]));
    for (const k of keys) expect(k.startsWith('t-k')).toBe(true);
    expect(keys.size).toBeGreaterThan(3);
    expect(finalRead).toBe(keys.size); // the final reads read each of them (n2 is back)
    const writes = ops
      .filter((op) => op.type === 'invoke' && op.f === 'write')
      .map((op) => (op.value as [string, number])[1]);
    expect(new Set(writes).size).toBe(writes.length);
    const reads = ops.filter((op) => op.type === 'ok' && op.f === 'read');
    expect(reads.some((op) => typeof (op.value as [string, unknown])[1] === 'number')).toBe(true);
  });
});

describe('final reads (Jepsen: read every key once the faults are healed)', () => {
  it('reads each key the schedule used once more, after the workload stopped, and sees its last value', async () => {
    const ops: Op[] = [];
    const kv = await startKvraft(NODES, 3);
    try {
      const history = new History(monoNs(), (op) => ops.push(op));
      const workload = new RegisterWorkload(kv.system, kv.cluster, history, new Rng(4), {
        concurrency: 4,
        rate: 200,
        timeoutMs: 1000,
        keys: 2,
        opsPerKey: 30,
        cas: false,
      });
      await expect(workload.finalReads(1000)).resolves.toBe(0); // nothing used yet
      workload.start('f');
      await sleep(1500);
      await workload.stop();
      const stoppedAt = ops.length;
      const used = new Set(ops.map((op) => (op.value as [string, unknown])[0]));
      expect(used.size).toBeGreaterThan(2); // keys were retired and replaced
      expect(await workload.finalReads(5000)).toBe(used.size);
      const finals = ops.slice(stoppedAt).filter((op) => op.type === 'ok');
      expect(finals.every((op) => op.f === 'read')).toBe(true);
      expect(new Set(finals.map((op) => (op.value as [string, unknown])[0]))).toEqual(used);
      // Marked final (Jepsen's :final? true), invocations and completions, and nothing before them.
      expect(ops.slice(stoppedAt).every((op) => op.final === true)).toBe(true);
      expect(ops.slice(0, stoppedAt).filter((op) => op.final === true)).toEqual([]);
      // no faults: each final read sees a write that no other write followed in real time
      const invokedAt = new Map<Op, number>();
      const open = new Map<number | string, number>();
      for (const op of ops.slice(0, stoppedAt)) {
        if (op.type === 'invoke') open.set(op.process, op.index);
        else invokedAt.set(op, open.get(op.process)!);
      }
      for (const key of used) {
        const writes = ops
          .slice(0, stoppedAt)
          .filter((op) => op.type === 'ok' && op.f === 'write' && (op.value as [string, number])[0] === key);
        const latest = writes.filter((w) => !writes.some((other) => invokedAt.get(other)! > w.index));
        const final = finals.find((op) => (op.value as [string, unknown])[0] === key)!;
        const expected = latest.length > 0 ? latest.map((w) => (w.value as [string, number])[1]) : [null];
        expect(expected).toContain((final.value as [string, unknown])[1]);
      }
    } finally {
      await kv.close();
    }
  }, 60_000);
});
