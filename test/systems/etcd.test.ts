import { expect, it } from 'vitest';

import { etcd } from '../../src/systems/etcd/etcd.js';
import { parseEtcdLog } from '../../src/systems/etcd/log.js';
import { skipReason, waitFor, waitForNewLeader } from './_helpers/cluster.js';
import { describeRealSystem } from './_helpers/describe-real-system.js';

const reason = skipReason(['etcd']);
const NODES = ['n1', 'n2', 'n3'];
const TIMEOUT_MS = 2_000;

describeRealSystem(
  { title: 'etcd', skip: reason, system: etcd, nodes: NODES, readyTimeoutMs: 20_000 },
  (adapter, started) => {
    it('reads, writes and compare-and-sets through the JSON gateway', async () => {
      const cluster = started();
      const client = adapter.client('n1', cluster, TIMEOUT_MS);
      expect(await client.read('x')).toEqual({ type: 'ok', value: null });
      expect(await client.write('x', 1)).toEqual({ type: 'ok' });
      expect(await client.read('x')).toEqual({ type: 'ok', value: 1 });
      expect(await client.cas('x', 1, 2)).toEqual({ type: 'ok' });
      expect((await client.cas('x', 1, 3)).type).toBe('fail');
      const other = adapter.client('n3', cluster, TIMEOUT_MS);
      expect(await other.read('x')).toEqual({ type: 'ok', value: 2 });
      await client.close();
      await other.close();
    });

    it('finds the leader, elects a new one after the leader is killed, and logs the election', async () => {
      const cluster = started();
      const leader = await waitFor(() => adapter.leadership!.leader(cluster), 10_000, 'leader');
      expect(NODES).toContain(leader);
      const t0 = Date.now();
      await cluster.kill(leader);
      cluster.members = NODES.filter((n) => n !== leader);
      const next = await waitForNewLeader(adapter, cluster, leader, 15_000);
      const failoverMs = Date.now() - t0;
      expect(next).not.toBe(leader);
      const client = adapter.client(next, cluster, TIMEOUT_MS);
      expect((await client.write('y', 7)).type).toBe('ok');
      await client.close();
      const events = cluster
        .lines(next)
        .map(parseEtcdLog)
        .filter((e) => e !== undefined);
      expect(events.some((e) => e.type === 'became-leader' && typeof e.attrs?.term === 'number')).toBe(true);
      console.log(`etcd failover after leader kill: ${failoverMs} ms`);
      cluster.members = [...NODES];
      await cluster.start(leader);
      await cluster.untilReady(20_000);
    });

    it('removes a member and adds it back with a fresh data dir', async () => {
      const cluster = started();
      // The configuration needs a quorum read: right after a change (the removed node may have led)
      // it can be unknown for a moment.
      const configurationOnceKnown = (c: typeof cluster) =>
        waitFor(() => adapter.membership!.configuration!(c), 15_000, 'a known configuration');
      const node = 'n3';
      // etcd refuses to remove a member until every peer has been connected for a few seconds.
      await waitFor(
        () =>
          adapter.membership!.remove(node, cluster).then(
            () => true,
            (e: unknown) =>
              String(e).includes('unhealthy cluster') ? undefined : Promise.reject(e as Error),
          ),
        15_000,
        'member remove',
      );
      cluster.members = NODES.filter((n) => n !== node);
      await cluster.kill(node);
      expect(await configurationOnceKnown(cluster)).toEqual(['n1', 'n2']);
      await cluster.wipe(node);
      await adapter.membership!.add(node, cluster);
      expect(await configurationOnceKnown(cluster)).toEqual(NODES);
      cluster.members = [...NODES];
      await cluster.start(node);
      await cluster.untilReady(20_000);
      const client = adapter.client(node, cluster, TIMEOUT_MS);
      expect(await client.read('y')).toEqual({ type: 'ok', value: 7 });
      await client.close();
    });
  },
);
