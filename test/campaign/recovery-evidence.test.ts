import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { NodeStatus } from '../../src/cluster/cluster.js';
import {
  describeRecovery,
  recoveryEvidence,
  type RecoveryCluster,
} from '../../src/campaign/recovery-evidence.js';
import type { SystemAdapter } from '../../src/systems/system.js';

const ADDRESS = { host: '127.0.0.1', port: 1 };

describe('recoveryEvidence: what a no-recovery finding keeps', () => {
  const root = mkdtempSync(join(tmpdir(), 'mallory-recovery-evidence-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it("carries, per node, what ready() checked of it last, the cluster's checks and the last heal", async () => {
    const status: Record<string, NodeStatus> = { n1: 'exited', n2: 'exited' };
    const cluster: RecoveryCluster = {
      nodes: ['n1', 'n2'],
      members: ['n1', 'n2'],
      runDir: root,
      dataDir: (n) => join(root, n),
      listen: () => ADDRESS,
      dial: () => ADDRESS,
      clientAddress: () => ADDRESS,
      statusOf: (n) => status[n],
      isMember: () => true,
      logDir: (n) => join(root, 'nodes', n),
    };
    const system = { name: 'fake' } as unknown as SystemAdapter;
    const lastHeal = { endedAtMs: 1, ms: 5, ops: [{ f: 'start' as const, value: ['n2'] }], errors: [] };

    const evidence = await recoveryEvidence(cluster, system, [], 1000, {
      lastAttempt: {
        atMs: 900,
        ms: 10,
        ready: false,
        checks: [
          { node: 'n1', check: 'read', ok: true, detail: 'served' },
          { node: 'n2', check: 'read', ok: false, detail: 'join cluster: server address already in use' },
          {
            check: 'configuration lists every member',
            ok: false,
            detail: 'n2 missing (lists 10.0.0.1:9001)',
          },
        ],
      },
      lastHeal,
    });

    expect(evidence.nodes.map((n) => [n.node, n.ready?.map((c) => c.detail)])).toEqual([
      ['n1', ['served']],
      ['n2', ['join cluster: server address already in use']],
    ]);
    expect(evidence.clusterChecks).toEqual([
      { check: 'configuration lists every member', ok: false, detail: 'n2 missing (lists 10.0.0.1:9001)' },
    ]);
    expect(evidence.lastHeal).toEqual(lastHeal);
    expect(describeRecovery(evidence)).toContain('last heal: start n2');
  });
});
