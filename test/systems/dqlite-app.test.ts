import { existsSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { DEBIAN_GOPATH } from '../../src/systems/dqlite/app-source.js';
import { APP_SNAPSHOT_THRESHOLD, dqliteApp } from '../../src/systems/dqlite/dqlite.js';
import { parseDqliteLog } from '../../src/systems/dqlite/log.js';
import type { TxnClient, TxnClientContext } from '../../src/systems/system.js';
import { disposeSandbox, mallory, sandbox, jsonOf } from '../e2e/helpers.js';
import { skipReason } from './_helpers/cluster.js';
import { concurrentTransfers } from './_helpers/bank-transfers.js';
import { describeRealSystem } from './_helpers/describe-real-system.js';

const reason =
  skipReason(['go', 'dqlite']) ??
  (existsSync(`${DEBIAN_GOPATH}/src/github.com/canonical/go-dqlite/app`)
    ? undefined
    : 'go-dqlite sources missing (apt-get install -y golang-github-canonical-go-dqlite-dev)');
const NODES = ['n1', 'n2', 'n3'];
const TIMEOUT_MS = 3_000;
const LIST_APPEND: TxnClientContext = { workload: 'list-append', runs: 'list-append' };
const BANK: TxnClientContext = { workload: 'rw-register', runs: 'bank' };
const CAMPAIGN_TIMEOUT_MS = 240_000;
const CONCURRENT_APPENDS = 30;
const TRANSFERS_PER_NODE = 20;

describeRealSystem(
  { title: 'our dqlite app', skip: reason, system: dqliteApp, nodes: NODES, readyTimeoutMs: 60_000 },
  (adapter, started) => {
    it('reads, writes and compare-and-sets', async () => {
      const cluster = started();
      expect(adapter.supportsCas).toBe(true);
      const client = adapter.client('n2', cluster, TIMEOUT_MS);
      expect(await client.read('x')).toEqual({ type: 'ok', value: null });
      expect(await client.write('x', 1)).toEqual({ type: 'ok' });
      expect(await client.cas('x', 1, 2)).toEqual({ type: 'ok' });
      expect(await client.cas('x', 1, 3)).toEqual({ type: 'fail', error: 'value is not 1' });
      expect(await adapter.client('n3', cluster, TIMEOUT_MS).read('x')).toEqual({ type: 'ok', value: 2 });
      await client.close();
    });

    const txnClient = (node: string): TxnClient => {
      const transactions = adapter.transactions;
      if (!transactions) throw new Error('dqlite-app offers no transactions');
      return transactions.client(node, started(), TIMEOUT_MS, LIST_APPEND);
    };

    it('runs both transactional workloads, serializable as dqlite documents', () => {
      expect(adapter.transactions?.workloads).toEqual(['list-append', 'rw-register']);
      expect(adapter.transactions?.consistency).toBe('serializable');
    });

    it('appends to a list, and a read on another node returns the list', async () => {
      const client = txnClient('n1');
      expect(await client.txn([['r', 'l1', null]])).toEqual({ type: 'ok', value: [['r', 'l1', null]] });
      for (const v of [1, 2, 3]) {
        expect(await client.txn([['append', 'l1', v]])).toEqual({ type: 'ok', value: [['append', 'l1', v]] });
      }
      await client.close();
      const other = txnClient('n3');
      expect(await other.txn([['r', 'l1', null]])).toEqual({ type: 'ok', value: [['r', 'l1', [1, 2, 3]]] });
      await other.close();
    });

    it('a transaction of several micro-ops reads its own writes', async () => {
      const client = txnClient('n2');
      expect(
        await client.txn([
          ['r', 'l2', null],
          ['append', 'l2', 1],
          ['r', 'l2', null],
          ['append', 'l2', 2],
          ['append', 'l3', 5],
          ['r', 'l2', null],
          ['r', 'l3', null],
        ]),
      ).toEqual({
        type: 'ok',
        value: [
          ['r', 'l2', null],
          ['append', 'l2', 1],
          ['r', 'l2', [1]],
          ['append', 'l2', 2],
          ['append', 'l3', 5],
          ['r', 'l2', [1, 2]],
          ['r', 'l3', [5]],
        ],
      });
      await client.close();
    });

    it('rw-register: writes and reads registers; a failing micro-op applies nothing', async () => {
      const client = txnClient('n3');
      expect(
        await client.txn([
          ['w', 'r1', 1],
          ['r', 'r1', null],
          ['w', 'r1', 2],
          ['r', 'r1', null],
        ]),
      ).toEqual({
        type: 'ok',
        value: [
          ['w', 'r1', 1],
          ['r', 'r1', 1],
          ['w', 'r1', 2],
          ['r', 'r1', 2],
        ],
      });
      // An append on a register fails after the write before it ran: all or nothing.
      const refused = await client.txn([
        ['w', 'r1', 3],
        ['append', 'r1', 4],
      ]);
      expect(refused).toMatchObject({ type: 'fail', error: expect.stringContaining('append r1') as unknown });
      expect(await client.txn([['r', 'r1', null]])).toEqual({ type: 'ok', value: [['r', 'r1', 2]] });
      await client.close();
    });

    it('concurrent transactions: what fails is not applied, what is ok is', async () => {
      const clients = NODES.map(txnClient);
      const values = Array.from({ length: CONCURRENT_APPENDS }, (_, i) => i + 1);
      const results = await Promise.all(
        values.map((v) =>
          clients[v % clients.length].txn([
            ['r', 'l4', null],
            ['append', 'l4', v],
          ]),
        ),
      );
      const outcome = (type: string): number[] => values.filter((_, i) => results[i].type === type);
      const read = await clients[0].txn([['r', 'l4', null]]);
      await Promise.all(clients.map((c) => c.close()));
      expect(read.type).toBe('ok');
      const list = read.type === 'ok' ? ((read.value[0][2] as number[] | null) ?? []) : [];
      for (const v of outcome('ok')) expect(list).toContain(v);
      for (const v of outcome('fail')) expect(list).not.toContain(v);
      expect(outcome('ok').length).toBeGreaterThan(0);
    });

    it('a guarded transaction applies only when its guard holds, read inside it', async () => {
      const client = adapter.transactions!.guardedClient!('n2', started(), TIMEOUT_MS, BANK);
      expect(await client.txnIf([['g1', null]], [['w', 'g1', 1]])).toEqual({
        type: 'ok',
        value: [['w', 'g1', 1]],
      });
      expect(
        await client.txnIf(
          [
            ['g1', 1],
            ['g2', 3],
          ],
          [['w', 'g1', 2]],
        ),
      ).toEqual({ type: 'fail', error: 'guard not met: key g2 holds nothing, not 3' });
      expect(await client.txnIf([['g1', 1]], [['append', 'g3', 1]])).toMatchObject({ type: 'ok' });
      expect(await client.txn([['r', 'g1', null]])).toEqual({ type: 'ok', value: [['r', 'g1', 1]] });
      await client.close();
    });

    it('concurrent bank transfers from every node through guarded transactions keep the total', async () => {
      const bank = { accounts: ['bank-0', 'bank-1', 'bank-2'], openingBalance: 10 };
      const { ok, read } = await concurrentTransfers(
        (node, cluster, timeoutMs) => adapter.transactions!.guardedClient!(node, cluster, timeoutMs, BANK),
        started(),
        { nodes: NODES, bank, perNode: TRANSFERS_PER_NODE, timeoutMs: TIMEOUT_MS },
      );
      expect(read.type).toBe('ok');
      const balances = Object.values((read as { value: Record<string, number> }).value);
      expect(balances.reduce((a, b) => a + b, 0)).toBe(30);
      expect(balances.every((b) => b >= 0)).toBe(true);
      expect(ok.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      console.log(`dqlite-app concurrent transfers: ${ok.join('+')} ok, balances ${balances.join(' ')}`);
    });

    it(`takes a snapshot every ${APP_SNAPSHOT_THRESHOLD} raft entries`, async () => {
      const cluster = started();
      const client = adapter.client('n1', cluster, TIMEOUT_MS);
      for (let i = 0; i < 2 * APP_SNAPSHOT_THRESHOLD; i++)
        expect((await client.write('y', i)).type).toBe('ok');
      await client.close();
      await new Promise((r) => setTimeout(r, 500));
      const snapshots = NODES.flatMap((n) => cluster.lines(n))
        .map(parseDqliteLog)
        .filter((e) => e?.type === 'snapshot-take');
      expect(snapshots.length).toBeGreaterThanOrEqual(NODES.length);
    });
  },
);

describe.skipIf(reason !== undefined)('a list-append campaign on our dqlite app (mallory run)', () => {
  const box = sandbox();
  afterAll(() => {
    disposeSandbox(box);
  });

  it('runs a few steps with faults and reports no harness error', async () => {
    const r = await mallory(
      [
        'run',
        '--system',
        'dqlite-app',
        '--workload',
        'list-append',
        '--nodes',
        '3',
        '--steps',
        '4',
        '--time',
        '40s',
        '--seed',
        '3',
        '--store',
        box.store,
        '--json',
      ],
      box,
      CAMPAIGN_TIMEOUT_MS,
    );
    expect(r.stdout, r.stderr).not.toBe('');
    const summary = jsonOf(r) as {
      status: string;
      error?: string;
      schedules: number;
      ops: { ok: number; fail: number; info: number };
    };
    expect(summary.error).toBeUndefined();
    expect(summary.status).toBe('complete');
    expect(summary.schedules).toBeGreaterThanOrEqual(1);
    expect(summary.ops.ok).toBeGreaterThan(100);
    expect([0, 1]).toContain(r.code);
  });
});
