import { expect, it } from 'vitest';

import type { Link } from '../../src/cluster/net/backend.js';
import { parseRedisLog } from '../../src/systems/redis/log.js';
import { redis } from '../../src/systems/redis/redis.js';
import { skipReason, waitForNewLeader } from './_helpers/cluster.js';
import { describeRealSystem } from './_helpers/describe-real-system.js';

const reason = skipReason(['redis-server', 'redis-sentinel']);
const NODES = ['n1', 'n2', 'n3'];
const TIMEOUT_MS = 1_000;

describeRealSystem(
  { title: 'redis + sentinel', skip: reason, system: redis, nodes: NODES, readyTimeoutMs: 30_000 },
  (adapter, started) => {
    it('reads, writes and compare-and-sets on the primary the sentinels name', async () => {
      const cluster = started();
      expect(await adapter.leadership!.leader(cluster)).toBe('n1');
      const client = adapter.client('n2', cluster, TIMEOUT_MS);
      // Each outcome names the node that answered: the primary, not the client's own n2.
      expect(await client.read('x')).toEqual({ type: 'ok', value: null, served: 'n1' });
      expect(await client.write('x', 1)).toEqual({ type: 'ok', served: 'n1' });
      expect(await client.cas('x', 1, 2)).toEqual({ type: 'ok', served: 'n1' });
      expect(await client.cas('x', 1, 3)).toMatchObject({ type: 'fail', served: 'n1' });
      expect(await client.read('x')).toEqual({ type: 'ok', value: 2, served: 'n1' });
      await client.close();
    });

    it('a healthy cluster is in no state its declared recovery exception excuses', async () => {
      const cluster = started();
      for (const exception of adapter.recoveryExceptions ?? []) {
        expect(await exception.holds(cluster, TIMEOUT_MS)).toBeUndefined();
      }
      expect(adapter.recoveryExceptions).toHaveLength(1);
    });

    it('fails over when the primary is killed, and the old primary rejoins as a replica', async () => {
      const cluster = started();
      const old = (await adapter.leadership!.leader(cluster))!;
      const t0 = Date.now();
      await cluster.kill(old);
      const next = await waitForNewLeader(adapter, cluster, old, 20_000, 'promoted replica');
      console.log(`redis failover after primary kill: ${Date.now() - t0} ms (${old} → ${next})`);
      const client = adapter.client(old, cluster, TIMEOUT_MS);
      expect(await client.read('x')).toEqual({ type: 'ok', value: 2, served: next });
      await client.close();
      const events = cluster.nodes.flatMap((n) => cluster.lines(n)).map(parseRedisLog);
      // What the adapter declares as a leader change (its failover loss) is what a failover logs.
      for (const type of adapter.failoverLoss!.events)
        expect(events.some((e) => e?.type === type)).toBe(true);
      await cluster.start(old);
      await cluster.untilReady(30_000);
    });

    it('loses acknowledged writes when the primary is cut off and a replica is promoted', async () => {
      const cluster = started();
      const old = (await adapter.leadership!.leader(cluster))!;
      const others = NODES.filter((n) => n !== old);
      const links: Link[] = others.flatMap((n): Link[] => [
        [old, n],
        [n, old],
      ]);
      const client = adapter.client(old, cluster, TIMEOUT_MS);
      expect((await client.write('lost', 0)).type).toBe('ok');
      await new Promise((r) => setTimeout(r, 300)); // replicated before the cut
      await cluster.net.cut(links);
      const acked: number[] = [];
      const t0 = Date.now();
      for (let v = 1; Date.now() - t0 < 4_000; v++) {
        if ((await client.write('lost', v)).type === 'ok') acked.push(v);
        await new Promise((r) => setTimeout(r, 50));
      }
      await client.close();
      await cluster.net.heal();
      await cluster.untilReady(30_000);
      const after = adapter.client(others[0], cluster, TIMEOUT_MS);
      const read = await after.read('lost');
      await after.close();
      console.log(
        `redis: ${acked.length} writes acknowledged by the cut-off primary; read after heal: ${JSON.stringify(read)}`,
      );
      expect(acked.length).toBeGreaterThan(0);
      expect(read.type).toBe('ok');
      expect(read.type === 'ok' && read.value).not.toBe(acked[acked.length - 1]);
    });
  },
);
