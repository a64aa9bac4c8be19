import { describe, expect, it, vi } from 'vitest';

import { checkBank } from '../../src/check/check-bank.js';
import { checkCounter } from '../../src/check/check-counter.js';
import { checkSet } from '../../src/check/check-set.js';
import type { Op } from '../../src/core/op.js';
import { Rng } from '../../src/core/random.js';
import type {
  ClientResult,
  ClusterView,
  CounterCapability,
  MicroOp,
  SystemAdapter,
  TransactionsCapability,
  TxnClientContext,
  TxnGuard,
  TxnResult,
} from '../../src/systems/system.js';
import { History } from '../../src/workload/history.js';
import { BUILTIN_WORKLOADS, workloadRefusal } from '../../src/workload/registry.js';
import type { WorkloadName } from '../../src/workload/workload.js';

/** One copy of every list, answered at once: a correct store. */
function listAppend(): TransactionsCapability {
  const lists = new Map<string, number[]>();
  return {
    workloads: ['list-append'],
    client: () => ({
      txn(ops: readonly MicroOp[]): Promise<TxnResult> {
        const value = ops.map((op): MicroOp => {
          if (op[0] === 'r') return ['r', op[1], lists.has(op[1]) ? [...lists.get(op[1])!] : null];
          if (op[0] === 'append') lists.set(op[1], [...(lists.get(op[1]) ?? []), op[2]]);
          return op;
        });
        return Promise.resolve({ type: 'ok', value });
      },
      close: () => Promise.resolve(),
    }),
  };
}

/** One copy of every register, answered at once, whose transactions take guards: a correct store. */
function guardedRegisters(): TransactionsCapability {
  const registers = new Map<string, number>();
  const txn = (ops: readonly MicroOp[]): TxnResult => ({
    type: 'ok',
    value: ops.map((op): MicroOp => {
      if (op[0] === 'r') return ['r', op[1], registers.get(op[1]) ?? null];
      if (op[0] === 'w') registers.set(op[1], op[2]);
      return op;
    }),
  });
  const client = () => ({
    txn: (ops: readonly MicroOp[]): Promise<TxnResult> => Promise.resolve(txn(ops)),
    txnIf: (guard: TxnGuard, ops: readonly MicroOp[]): Promise<TxnResult> =>
      Promise.resolve(
        guard.every(([key, value]) => (registers.get(key) ?? null) === value)
          ? txn(ops)
          : { type: 'fail', error: 'guard not met' },
      ),
    close: () => Promise.resolve(),
  });
  return { workloads: ['rw-register'], client, guardedClient: client };
}

/** Counters that add correctly, or (`lose`) drop every third acknowledged add. */
function counters(lose = false): CounterCapability {
  const counts = new Map<string, number>();
  let adds = 0;
  return {
    client: () => ({
      add(key: string, delta: number): Promise<ClientResult> {
        if (!(lose && adds++ % 3 === 0)) counts.set(key, (counts.get(key) ?? 0) + delta);
        return Promise.resolve({ type: 'ok' });
      },
      read: (key: string): Promise<ClientResult> =>
        Promise.resolve({ type: 'ok', value: counts.get(key) ?? null }),
      close: () => Promise.resolve(),
    }),
  };
}

function system(parts: Partial<SystemAdapter>): SystemAdapter {
  return { name: 'fake', ...parts } as SystemAdapter;
}

const cluster = { nodes: ['n1', 'n2'] } as unknown as ClusterView;

/** How long a run may take to do `enough` on a loaded machine before the test gives up. */
const ENOUGH_TIMEOUT_MS = 20_000;
const ENOUGH_POLL_MS = 5;

const okCount = (ops: readonly Op[], f: string): number =>
  ops.filter((op) => op.f === f && op.type === 'ok').length;

/** Runs a workload until `enough` holds of its history (a condition, not a span of time), then stops it. */
async function run(
  name: WorkloadName,
  of: SystemAdapter,
  enough: (ops: readonly Op[]) => boolean,
): Promise<Op[]> {
  const ops: Op[] = [];
  const workload = BUILTIN_WORKLOADS[name].create({
    system: of,
    cluster,
    history: new History(0, (op) => ops.push(op)),
    rng: new Rng(9),
    concurrency: 3,
    rate: 500,
    timeoutMs: 200,
  });
  workload.start('s0');
  await vi.waitFor(
    () => {
      if (!enough(ops)) throw new Error(`not enough yet: ${ops.length} ops`);
    },
    { timeout: ENOUGH_TIMEOUT_MS, interval: ENOUGH_POLL_MS },
  );
  await workload.stop();
  await workload.finalReads(1000);
  return ops;
}

describe('the built-in workloads', () => {
  it('refuse at start a system without the client capability they need, naming what it can run', () => {
    const plain = system({});
    expect(workloadRefusal('register', plain)).toBeUndefined();
    expect(workloadRefusal('set', plain)).toBe(
      'system fake keeps no sets (a set client, or list-append transactions): use --workload register',
    );
    expect(workloadRefusal('counter', plain)).toBe(
      'system fake keeps no counters (a counter client with an atomic add): use --workload register',
    );
    expect(workloadRefusal('list-append', system({ counters: counters() }))).toBe(
      'system fake does not run list-append transactions: use --workload register or counter',
    );
    expect(workloadRefusal('set', system({ transactions: listAppend() }))).toBeUndefined();
    expect(workloadRefusal('bank', system({ transactions: listAppend() }))).toBe(
      'system fake keeps no bank (a bank client, or transactions that can be guarded): use --workload register, list-append or set',
    );
    expect(workloadRefusal('bank', system({ transactions: guardedRegisters() }))).toBeUndefined();
  });

  it('run the bank workload through guarded transactions: transfers and whole-bank reads, in Jepsen’s shape', async () => {
    const ops = await run(
      'bank',
      system({ transactions: guardedRegisters() }),
      (sofar) =>
        okCount(sofar, 'transfer') > 5 &&
        sofar.some(
          (op) =>
            op.f === 'read' &&
            op.type === 'ok' &&
            Object.values(op.value as object).some((balance) => balance !== 20),
        ) &&
        okCount(sofar, 'read') > 5,
    );
    expect(new Set(ops.map((op) => op.f))).toEqual(new Set(['transfer', 'read']));
    const transfers = ops.filter((op) => op.f === 'transfer' && op.type === 'ok');
    expect(transfers.length).toBeGreaterThan(5);
    for (const op of transfers) {
      const { from, to, amount } = op.value as { from: number; to: number; amount: number };
      expect([from, to].every((a) => Number.isInteger(a) && a >= 0 && a < 5)).toBe(true);
      expect(from).not.toBe(to);
      expect(amount >= 1 && amount <= 5).toBe(true);
    }
    const reads = ops.filter((op) => op.f === 'read' && op.type === 'ok');
    expect(reads.length).toBeGreaterThan(5);
    expect(reads.every((op) => Object.keys(op.value as object).join() === '0,1,2,3,4')).toBe(true);
    expect(reads.some((op) => Object.values(op.value as object).some((balance) => balance !== 20))).toBe(
      true,
    );
    // The final read: the last op reads the whole bank.
    expect(ops.at(-1)).toMatchObject({ f: 'read', type: 'ok' });
    expect(checkBank(ops, { accounts: [0, 1, 2, 3, 4], total: 100 })).toMatchObject({
      valid: true,
      errors: [],
    });
  });

  it('run the set workload through list-append transactions: adds and whole reads, in Jepsen’s shape', async () => {
    const ops = await run(
      'set',
      system({ transactions: listAppend() }),
      (sofar) =>
        sofar.filter((op) => op.f === 'add' && op.type === 'invoke').length > 10 &&
        sofar.some(
          (op) => op.f === 'read' && op.type === 'ok' && (op.value as [string, number[]])[1].length > 1,
        ),
    );
    expect(new Set(ops.map((op) => op.f))).toEqual(new Set(['add', 'read']));
    const adds = ops
      .filter((op) => op.f === 'add' && op.type === 'invoke')
      .map((op) => op.value as [string, number]);
    expect(adds.length).toBeGreaterThan(10);
    expect(new Set(adds.map(([, e]) => e)).size).toBe(adds.length);
    expect(adds.every(([key]) => /^s0-s\d$/.test(key))).toBe(true);
    const read = ops.find(
      (op) => op.f === 'read' && op.type === 'ok' && (op.value as [string, number[]])[1].length > 1,
    );
    expect(read?.value).toEqual([expect.any(String), expect.arrayContaining([expect.any(Number)])]);
    expect(checkSet(ops)).toMatchObject({ valid: true, lost: [], unexpected: [] });
  });

  it('run the counter workload on a counter client; a store that drops adds fails the check', async () => {
    const good = await run('counter', system({ counters: counters() }), (sofar) => okCount(sofar, 'add') > 5);
    expect(good.filter((op) => op.f === 'add' && op.type === 'ok').length).toBeGreaterThan(5);
    expect(good.every((op) => Array.isArray(op.value) && (op.value as unknown[]).length === 2)).toBe(true);
    expect(checkCounter(good).valid).toBe(true);
    const lossy = await run(
      'counter',
      system({ counters: counters(true) }),
      (sofar) => okCount(sofar, 'add') > 5,
    );
    expect(checkCounter(lossy).valid).toBe(false);
  });

  it('tell the transactions client which workload it serves: list-append and set on lists, rw-register and bank on registers', async () => {
    const told = (name: WorkloadName): Promise<TxnClientContext[]> => {
      const contexts: TxnClientContext[] = [];
      const lists = listAppend();
      const registers = guardedRegisters();
      const both: TransactionsCapability = {
        workloads: ['list-append', 'rw-register'],
        client: (node, c, timeoutMs, context) => {
          contexts.push(context);
          return (context.workload === 'list-append' ? lists : registers).client(node, c, timeoutMs, context);
        },
        guardedClient: (node, c, timeoutMs, context) => {
          contexts.push(context);
          return registers.guardedClient!(node, c, timeoutMs, context);
        },
      };
      return run(name, system({ transactions: both }), (sofar) => sofar.some((op) => op.type === 'ok')).then(
        () => contexts,
      );
    };
    const distinct = (contexts: TxnClientContext[]) => [...new Set(contexts.map((c) => JSON.stringify(c)))];
    expect(distinct(await told('list-append'))).toEqual(['{"workload":"list-append","runs":"list-append"}']);
    expect(distinct(await told('rw-register'))).toEqual(['{"workload":"rw-register","runs":"rw-register"}']);
    expect(distinct(await told('set'))).toEqual(['{"workload":"list-append","runs":"set"}']);
    expect(distinct(await told('bank'))).toEqual(['{"workload":"rw-register","runs":"bank"}']);
  });
});
