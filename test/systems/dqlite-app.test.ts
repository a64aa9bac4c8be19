import { existsSync } from 'node:fs';

import { expect, it } from 'vitest';

import { DEBIAN_GOPATH } from '../../src/systems/dqlite/app-source.js';
import { APP_SNAPSHOT_THRESHOLD, dqliteApp } from '../../src/systems/dqlite/dqlite.js';
import { parseDqliteLog } from '../../src/systems/dqlite/log.js';
import { skipReason } from './_helpers/cluster.js';
import { describeRealSystem } from './_helpers/describe-real-system.js';

const reason =
  skipReason(['go', 'dqlite']) ??
  (existsSync(`${DEBIAN_GOPATH}/src/github.com/canonical/go-dqlite/app`)
    ? undefined
    : 'go-dqlite sources missing (apt-get install -y golang-github-canonical-go-dqlite-dev)');
const NODES = ['n1', 'n2', 'n3'];
const TIMEOUT_MS = 3_000;

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

    it(`takes a snapshot every ${APP_SNAPSHOT_THRESHOLD} raft entries`, async () => {
      const cluster = started();
      const client = adapter.client('n1', cluster, TIMEOUT_MS);
      for (let i = 0; i < 2 * APP_SNAPSHOT_THRESHOLD; i++)
        expect((await client.write('y', i)).type).toBe('ok');
      await client.close();
      await new Promise((r) => setTimeout(r, 500));
      const snapshots = NODES.flatMap((n) => cluster.lines.get(n) ?? [])
        .map(parseDqliteLog)
        .filter((e) => e?.type === 'snapshot-take');
      expect(snapshots.length).toBeGreaterThanOrEqual(NODES.length);
    });
  },
);
