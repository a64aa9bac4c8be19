import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { Rng } from '../../src/core/random.js';
import type {
  ClusterView,
  MicroOp,
  TransactionsCapability,
  TxnClient,
  TxnResult,
} from '../../src/systems/system.js';
import { History } from '../../src/workload/history.js';
import { TxnWorkload } from '../../src/workload/txn.js';

/** A single-copy store that answers each transaction at once, except as `answer` says. */
function fakeSystem(answer: (call: number) => 'ok' | 'fail' | 'info' | 'refused'): TransactionsCapability {
  const lists = new Map<string, number[]>();
  let calls = 0;
  const client: TxnClient = {
    txn(ops: readonly MicroOp[]): Promise<TxnResult> {
      const outcome = answer(calls++);
      if (outcome === 'refused') {
        return Promise.resolve({ type: 'fail', error: 'connect ECONNREFUSED 127.0.0.1:7001' });
      }
      if (outcome !== 'ok') return Promise.resolve({ type: outcome, error: `told to ${outcome}` });
      const value = ops.map((op): MicroOp => {
        if (op[0] === 'r') return ['r', op[1], lists.has(op[1]) ? [...lists.get(op[1])!] : null];
        if (op[0] === 'append') lists.set(op[1], [...(lists.get(op[1]) ?? []), op[2]]);
        return op;
      });
      return Promise.resolve({ type: 'ok', value });
    },
    close: () => Promise.resolve(),
  };
  return { workloads: ['list-append'], client: () => client };
}

const cluster = { nodes: ['n1', 'n2'] } as unknown as ClusterView;

async function runFor(ms: number, answer: (call: number) => 'ok' | 'fail' | 'info' | 'refused') {
  const ops: Op[] = [];
  const history = new History(0, (op) => ops.push(op));
  const workload = new TxnWorkload(fakeSystem(answer), cluster, history, new Rng(5), {
    workload: 'list-append',
    concurrency: 2,
    rate: 400,
    timeoutMs: 200,
  });
  workload.start('s0');
  await new Promise((resolve) => setTimeout(resolve, ms));
  await workload.stop();
  const finalStart = ops.length;
  const read = await workload.finalReads(1000);
  return { ops, workload, finalStart, read };
}

describe('TxnWorkload', () => {
  it('records each transaction as f txn, the invoke with null reads and the ok with them filled in', async () => {
    const { ops, workload } = await runFor(150, () => 'ok');
    expect(ops.length).toBeGreaterThan(20);
    expect(ops.every((op) => op.f === 'txn')).toBe(true);
    for (const op of ops.filter((o) => o.type === 'invoke')) {
      for (const micro of op.value as MicroOp[]) if (micro[0] === 'r') expect(micro[2]).toBeNull();
    }
    const reads = ops
      .filter((o) => o.type === 'ok')
      .flatMap((o) => o.value as MicroOp[])
      .filter((m) => m[0] === 'r' && m[2] !== null);
    expect(reads.length).toBeGreaterThan(0);
    expect(workload.counts.ok).toBe(ops.filter((o) => o.type === 'ok').length);
  });

  it('reads every key it used once more at the end, one transaction each', async () => {
    const { ops, finalStart, read } = await runFor(100, () => 'ok');
    const used = new Set(ops.slice(0, finalStart).flatMap((o) => (o.value as MicroOp[]).map((m) => m[1])));
    const finals = ops.slice(finalStart).filter((o) => o.type === 'ok');
    expect(read).toBe(used.size);
    expect(new Set(finals.map((o) => (o.value as MicroOp[])[0][1]))).toEqual(used);
    expect(finals.every((o) => (o.value as MicroOp[]).length === 1)).toBe(true);
  });

  it('keeps the invoked micro-ops on fail and info, and moves on to a new process after info', async () => {
    const { ops, workload } = await runFor(150, (call) =>
      call % 3 === 0 ? 'info' : call % 3 === 1 ? 'fail' : 'ok',
    );
    expect(workload.counts.info).toBeGreaterThan(0);
    expect(workload.counts.fail).toBeGreaterThan(0);
    const invokes = new Map<number | string, Op>();
    const processesWithInfo = new Set<number | string>();
    for (const op of ops) {
      if (op.type === 'invoke') {
        expect(processesWithInfo.has(op.process)).toBe(false);
        invokes.set(op.process, op);
        continue;
      }
      if (op.type !== 'ok') expect(op.value).toEqual(invokes.get(op.process)!.value);
      if (op.type === 'info') processesWithInfo.add(op.process);
    }
  });

  it('counts fails from refused connections apart from the other fails', async () => {
    const { ops, workload } = await runFor(300, (call) =>
      call % 3 === 0 ? 'refused' : call % 3 === 1 ? 'fail' : 'ok',
    );
    const fails = ops.filter((o) => o.type === 'fail');
    const refused = fails.filter((o) => o.error?.includes('ECONNREFUSED')).length;
    expect(refused).toBeGreaterThan(0);
    expect(workload.counts.refused).toBe(refused);
    expect(workload.counts.fail).toBe(fails.length - refused);
  });
});
