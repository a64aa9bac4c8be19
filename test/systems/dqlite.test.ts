import { expect, it } from 'vitest';

import { dqlite } from '../../src/systems/dqlite/dqlite.js';
import { parseDqliteLog } from '../../src/systems/dqlite/log.js';
import { dqliteShell } from '../../src/systems/dqlite/shell.js';
import { skipReason, waitFor, waitForNewLeader } from './_helpers/cluster.js';
import { describeRealSystem } from './_helpers/describe-real-system.js';

const reason = skipReason(['dqlite-demo', 'dqlite']);
const NODES = ['n1', 'n2', 'n3'];
const TIMEOUT_MS = 3_000;

describeRealSystem(
  { title: 'dqlite-demo', skip: reason, system: dqlite, nodes: NODES, readyTimeoutMs: 60_000 },
  (adapter, started) => {
    it('reads and writes through any node, and says it has no cas', async () => {
      const cluster = started();
      expect(adapter.supportsCas).toBe(false);
      const a = adapter.client('n1', cluster, TIMEOUT_MS);
      const b = adapter.client('n3', cluster, TIMEOUT_MS);
      expect(await a.read('x')).toEqual({ type: 'ok', value: null });
      expect(await a.write('x', 1)).toEqual({ type: 'ok' });
      expect(await b.read('x')).toEqual({ type: 'ok', value: 1 });
      expect(await b.write('x', 2)).toEqual({ type: 'ok' });
      expect(await a.read('x')).toEqual({ type: 'ok', value: 2 });
      expect((await a.cas('x', 2, 3)).type).toBe('fail');
      await a.close();
      await b.close();
    });

    it('elects a new leader after the leader is killed and keeps the data', async () => {
      const cluster = started();
      const leader = await waitFor(() => adapter.leadership!.leader(cluster), 10_000, 'leader');
      const t0 = Date.now();
      await cluster.kill(leader);
      cluster.members = NODES.filter((n) => n !== leader);
      const next = await waitForNewLeader(adapter, cluster, leader, 20_000);
      console.log(`dqlite failover after leader kill: ${Date.now() - t0} ms (${leader} → ${next})`);
      const client = adapter.client(next, cluster, TIMEOUT_MS);
      expect(await client.read('x')).toEqual({ type: 'ok', value: 2 });
      await client.close();
      expect(cluster.exits.get(leader)?.[0]?.signal).toBe('SIGKILL');
      const events = cluster.lines(next).map(parseDqliteLog);
      expect(events.some((e) => e?.type === 'became-leader')).toBe(true);
      cluster.members = [...NODES];
      await cluster.start(leader);
      await cluster.untilReady(60_000);
    });

    it('removes a member through the shell and re-adds it with a fresh data dir', async () => {
      const cluster = started();
      const leader = await waitFor(() => adapter.leadership!.leader(cluster), 10_000, 'leader');
      const node = NODES.find((n) => n !== leader)!;
      await adapter.membership!.remove(node, cluster);
      await cluster.kill(node);
      cluster.members = NODES.filter((n) => n !== node);
      await cluster.wipe(node);
      await adapter.membership!.add(node, cluster);
      cluster.members = [...NODES];
      // Not started yet: the readiness check says which member does not answer, and how.
      const answer = await adapter.ready(cluster, AbortSignal.timeout(10_000));
      expect(typeof answer !== 'boolean' && answer.ready).toBe(false);
      const checks = typeof answer === 'boolean' ? [] : answer.checks;
      expect(checks.filter((c) => !c.ok).map((c) => [c.node, c.check])).toEqual([[node, 'read']]);
      expect(checks.find((c) => !c.ok)?.detail).toMatch(/^refused: /);
      await cluster.start(node);
      await cluster.untilReady(60_000);
      const client = adapter.client(node, cluster, TIMEOUT_MS);
      expect(await client.read('x')).toEqual({ type: 'ok', value: 2 });
      await client.close();
    });
    it('says which members its committed configuration lists, also after a removal it did not make', async () => {
      const cluster = started();
      const configuration = (c: typeof cluster) => adapter.membership!.configuration!(c);
      const all = await waitFor(() => configuration(cluster), 10_000, 'a committed configuration');
      expect([...all].sort()).toEqual(NODES);
      const leader = await waitFor(() => adapter.leadership!.leader(cluster), 10_000, 'leader');
      const node = NODES.find((n) => n !== leader)!;
      // As a removal whose call failed ("server has lost leadership") and that committed later.
      const db = cluster.clientAddress(node, 'db');
      const others = NODES.filter((n) => n !== node).map((n) => cluster.clientAddress(n, 'db'));
      expect((await dqliteShell(others, [`.remove ${db.host}:${db.port}`])).code).toBe(0);
      const listed = await waitFor(
        async () => {
          const members = await configuration(cluster);
          return members && !members.includes(node) ? members : undefined;
        },
        10_000,
        'a configuration without the removed node',
      );
      expect([...listed].sort()).toEqual(NODES.filter((n) => n !== node));
      await cluster.kill(node);
      cluster.members = NODES.filter((n) => n !== node);
      await cluster.wipe(node);
      await adapter.membership!.add(node, cluster);
      cluster.members = [...NODES];
      await cluster.start(node);
      await cluster.untilReady(60_000);
      const again = await waitFor(() => configuration(cluster), 10_000, 'a committed configuration');
      expect([...again].sort()).toEqual(NODES);
    });
  },
);
