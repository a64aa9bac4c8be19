import { afterAll, expect, it } from 'vitest';

import { etcd } from '../../../src/systems/etcd/etcd.js';
import { EtcdTxnClient } from '../../../src/systems/etcd/txn-client.js';
import type { GuardedTxnClient, MicroOp, TxnClient, TxnClientContext } from '../../../src/systems/system.js';
import { concurrentTransfers } from '../_helpers/bank-transfers.js';
import { skipReason } from '../_helpers/cluster.js';
import { describeRealSystem } from '../_helpers/describe-real-system.js';
import { gatewayProxy, type ProxyAction } from './_helpers/gateway-proxy.js';

const reason = skipReason(['etcd']);
const NODES = ['n1', 'n2', 'n3'];
const TIMEOUT_MS = 2_000;
const LIST_APPEND: TxnClientContext = { workload: 'list-append', runs: 'list-append' };
const BANK: TxnClientContext = { workload: 'rw-register', runs: 'bank' };
/** Short, for the tests whose proxy never answers. */
const LOST_TIMEOUT_MS = 500;
const APPENDS_PER_CLIENT = 25;
const TRANSFERS_PER_CLIENT = 25;

/** The second etcd txn of a writing transaction: the one with the guard. */
function isCommit(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'compare' in body;
}

describeRealSystem(
  { title: 'etcd transactions', skip: reason, system: etcd, nodes: NODES, readyTimeoutMs: 20_000 },
  (adapter, started) => {
    const clients: TxnClient[] = [];
    const client = (node: string, timeoutMs = TIMEOUT_MS): TxnClient => {
      const c = adapter.transactions!.client(node, started(), timeoutMs, LIST_APPEND);
      clients.push(c);
      return c;
    };
    afterAll(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });
    /** A client whose requests to n1 pass through a proxy that `intercept` steers. */
    const proxied = async (
      intercept: (body: unknown) => Promise<ProxyAction>,
      timeoutMs = TIMEOUT_MS,
    ): Promise<{ client: TxnClient; close: () => Promise<void> }> => {
      const proxy = await gatewayProxy(started().clientAddress('n1', 'client'), (_, body) => intercept(body));
      const c = new EtcdTxnClient(proxy.address, timeoutMs);
      return {
        client: c,
        close: async () => {
          await c.close();
          await proxy.close();
        },
      };
    };
    const readOne = async (key: string, node = 'n2'): Promise<MicroOp> => {
      const result = await client(node).txn([['r', key, null]]);
      if (result.type !== 'ok') throw new Error(`read of ${key}: ${result.error}`);
      return result.value[0];
    };

    it('declares both transactional workloads, strict serializable', () => {
      expect(adapter.transactions).toMatchObject({
        workloads: ['list-append', 'rw-register'],
        consistency: 'strict-serializable',
      });
    });

    it('list-append: appends, then reads the list in the same and later transactions, on any node', async () => {
      const c = client('n1');
      expect(await c.txn([['r', 'la', null]])).toEqual({ type: 'ok', value: [['r', 'la', null]] });
      expect(
        await c.txn([
          ['r', 'la', null],
          ['append', 'la', 1],
          ['append', 'la', 2],
          ['r', 'la', null],
        ]),
      ).toEqual({
        type: 'ok',
        value: [
          ['r', 'la', null],
          ['append', 'la', 1],
          ['append', 'la', 2],
          ['r', 'la', [1, 2]],
        ],
      });
      expect(
        await c.txn([
          ['append', 'la', 3],
          ['append', 'lb', 1],
        ]),
      ).toMatchObject({ type: 'ok' });
      expect(await readOne('la', 'n3')).toEqual(['r', 'la', [1, 2, 3]]);
      expect(await readOne('lb', 'n2')).toEqual(['r', 'lb', [1]]);
    });

    it('rw-register: a transaction reads its own writes, and commits only the last', async () => {
      const c = client('n2');
      expect(
        await c.txn([
          ['r', 'ra', null],
          ['w', 'ra', 1],
          ['r', 'ra', null],
          ['w', 'ra', 2],
          ['r', 'ra', null],
        ]),
      ).toEqual({
        type: 'ok',
        value: [
          ['r', 'ra', null],
          ['w', 'ra', 1],
          ['r', 'ra', 1],
          ['w', 'ra', 2],
          ['r', 'ra', 2],
        ],
      });
      expect(await readOne('ra', 'n1')).toEqual(['r', 'ra', 2]);
    });

    it('a commit that loses the race to a write landing after its snapshot fails and writes nothing', async () => {
      const other = client('n3');
      expect(await other.txn([['append', 'race', 1]])).toMatchObject({ type: 'ok' });
      const racer = await proxied(async (body) => {
        if (isCommit(body)) expect(await other.txn([['append', 'race', 100]])).toMatchObject({ type: 'ok' });
        return 'forward';
      });
      expect(await racer.client.txn([['append', 'race', 2]])).toEqual({
        type: 'fail',
        error: expect.stringMatching(/^a key changed after revision \d+: nothing written$/) as unknown,
      });
      // A key only read guards the commit too: the write to the other key is not applied.
      expect(
        await racer.client.txn([
          ['r', 'race', null],
          ['append', 'race-other', 1],
        ]),
      ).toMatchObject({ type: 'fail' });
      await racer.close();
      expect(await readOne('race')).toEqual(['r', 'race', [1, 100, 100]]);
      expect(await readOne('race-other')).toEqual(['r', 'race-other', null]);
    });

    it('concurrent appends to one key from two nodes: every acknowledged append is in the list once, no refused one', async () => {
      const run = async (node: string, first: number): Promise<{ ok: number[]; fail: number[] }> => {
        const c = client(node);
        const ok: number[] = [];
        const fail: number[] = [];
        for (let v = first; v < first + APPENDS_PER_CLIENT; v++) {
          const result = await c.txn([
            ['r', 'contended', null],
            ['append', 'contended', v],
          ]);
          if (result.type === 'info') throw new Error(`append ${v}: ${result.error}`);
          (result.type === 'ok' ? ok : fail).push(v);
        }
        return { ok, fail };
      };
      const [a, b] = await Promise.all([run('n1', 1), run('n3', 1000)]);
      const [, , list] = await readOne('contended');
      const acknowledged = [...a.ok, ...b.ok];
      expect([...(list as number[])].sort((x, y) => x - y)).toEqual(acknowledged.sort((x, y) => x - y));
      console.log(
        `etcd contended appends: ${acknowledged.length} ok, ${a.fail.length + b.fail.length} failed the guard`,
      );
    });

    it('a snapshot read with no answer fails; a commit with no answer is info, and may have applied', async () => {
      const lostRead = await proxied(() => Promise.resolve('drop'), LOST_TIMEOUT_MS);
      expect(await lostRead.client.txn([['append', 'lost', 1]])).toMatchObject({
        type: 'fail',
        error: expect.stringMatching(/^snapshot read: timeout/) as unknown,
      });
      await lostRead.close();
      const lostCommit = await proxied(
        (body) => Promise.resolve(isCommit(body) ? 'forward-then-drop' : 'forward'),
        LOST_TIMEOUT_MS,
      );
      expect(await lostCommit.client.txn([['append', 'lost', 2]])).toMatchObject({
        type: 'info',
        error: expect.stringMatching(/^timeout/) as unknown,
      });
      await lostCommit.close();
      expect(await readOne('lost')).toEqual(['r', 'lost', [2]]);
    });

    it('a commit etcd refuses before proposing it fails; one whose fate it does not know is info', async () => {
      const answer =
        (error: string) =>
        (body: unknown): Promise<ProxyAction> =>
          Promise.resolve(isCommit(body) ? { status: 503, body: { error, code: 14 } } : 'forward');
      const refused = await proxied(answer('etcdserver: too many requests'));
      expect(await refused.client.txn([['w', 'refused', 1]])).toEqual({
        type: 'fail',
        error: '503: etcdserver: too many requests',
      });
      await refused.close();
      const unknown = await proxied(answer('etcdserver: request timed out'));
      expect(await unknown.client.txn([['w', 'refused', 1]])).toEqual({
        type: 'info',
        error: '503: etcdserver: request timed out',
      });
      await unknown.close();
    });

    it('refuses an append to a register before writing anything', async () => {
      const c = client('n1');
      expect(await c.txn([['w', 'mixed', 1]])).toMatchObject({ type: 'ok' });
      expect(
        await c.txn([
          ['append', 'mixed-2', 1],
          ['append', 'mixed', 2],
        ]),
      ).toEqual({ type: 'fail', error: 'append on key "mixed", which holds a register' });
      expect(await readOne('mixed-2')).toEqual(['r', 'mixed-2', null]);
    });

    it('a guarded transaction applies only while its guard holds, also against a write after its snapshot', async () => {
      const c: GuardedTxnClient = adapter.transactions!.guardedClient!('n1', started(), TIMEOUT_MS, BANK);
      clients.push(c);
      expect(await c.txnIf([['ga', null]], [['w', 'ga', 1]])).toMatchObject({ type: 'ok' });
      expect(await c.txnIf([['ga', null]], [['w', 'ga', 2]])).toEqual({
        type: 'fail',
        error: expect.stringMatching(
          /^key "ga" holds 1 at revision \d+, not null: nothing written$/,
        ) as unknown,
      });
      const other = client('n3');
      const racer = await proxied(async (body) => {
        if (isCommit(body)) expect(await other.txn([['w', 'ga', 5]])).toMatchObject({ type: 'ok' });
        return 'forward';
      });
      const guarded = racer.client as GuardedTxnClient;
      expect(await guarded.txnIf([['ga', 1]], [['w', 'gb', 9]])).toMatchObject({ type: 'fail' });
      await racer.close();
      expect(await readOne('ga')).toEqual(['r', 'ga', 5]);
      expect(await readOne('gb')).toEqual(['r', 'gb', null]);
    });

    it('concurrent bank transfers from three nodes through guarded transactions keep the total', async () => {
      const bank = { accounts: ['bank-0', 'bank-1', 'bank-2'], openingBalance: 10 };
      const { ok, read } = await concurrentTransfers(
        (node, cluster, timeoutMs) => adapter.transactions!.guardedClient!(node, cluster, timeoutMs, BANK),
        started(),
        {
          nodes: NODES,
          bank,
          perNode: TRANSFERS_PER_CLIENT,
          timeoutMs: TIMEOUT_MS,
        },
      );
      expect(read.type).toBe('ok');
      const balances = Object.values((read as { value: Record<string, number> }).value);
      expect(balances).toHaveLength(3);
      expect(balances.reduce((a, b) => a + b, 0)).toBe(30);
      expect(balances.every((b) => b >= 0)).toBe(true);
      expect(ok.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      console.log(
        `etcd concurrent transfers: ${ok.join('+')} ok of ${3 * TRANSFERS_PER_CLIENT}, balances ${balances.join(' ')}`,
      );
    });
  },
);
