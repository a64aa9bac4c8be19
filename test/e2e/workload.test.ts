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
    cluster.pause('n2'); // its workers' ops time out: info, then a new process id
    await sleep(1500);
    cluster.resume('n2');
    await sleep(500);
    await workload.stop();
  }, 60_000);

  afterAll(async () => {
    await kv.close();
  });

  it('records every invocation with exactly one completion, in Jepsen shape and index order', () => {
    expect(ops.length).toBeGreaterThan(200);
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
    const writes = ops
      .filter((op) => op.type === 'invoke' && op.f === 'write')
      .map((op) => (op.value as [string, number])[1]);
    expect(new Set(writes).size).toBe(writes.length);
    const reads = ops.filter((op) => op.type === 'ok' && op.f === 'read');
    expect(reads.some((op) => typeof (op.value as [string, unknown])[1] === 'number')).toBe(true);
  });
});
