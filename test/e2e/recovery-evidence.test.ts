import { afterEach, describe, expect, it } from 'vitest';

import { describeRecovery, recoveryEvidence } from '../../src/campaign/recovery-evidence.js';
import { type KvraftCluster, startKvraft } from './helpers.js';

const OP_TIMEOUT_MS = 1000;

describe('no-recovery evidence (kvraft, real processes)', () => {
  let kv: KvraftCluster | undefined;
  afterEach(async () => {
    await kv?.close();
    kv = undefined;
  });

  it("says what each node answered, the leader, the members and each node's last lines", async () => {
    kv = await startKvraft(['n1', 'n2', 'n3'], 5);
    const { cluster, system } = kv;
    // Two of three down: the one left cannot serve.
    await cluster.kill('n2');
    await cluster.kill('n3');

    const evidence = await recoveryEvidence(cluster, system, ['start n2: it would not'], OP_TIMEOUT_MS);

    expect(evidence.nodes.map((n) => [n.node, n.status, n.member])).toEqual([
      ['n1', 'running', true],
      ['n2', 'killed', true],
      ['n3', 'killed', true],
    ]);
    const [n1, n2] = evidence.nodes;
    expect(n1.read?.type === 'fail' || n1.read?.type === 'info').toBe(true);
    expect(n2.read).toBeUndefined();
    for (const n of evidence.nodes) expect(n.lastLines.length).toBeGreaterThan(0);
    expect(evidence.leader === null || evidence.leader === undefined || evidence.leader === 'n1').toBe(true);
    const line = describeRecovery(evidence);
    process.stdout.write(`no-recovery evidence: ${line}\n`);
    expect(line).toMatch(/^n1: (fail|info) \(.+\); n2: killed; n3: killed/);
    expect(line).toContain('reset errors: start n2: it would not');

    // Once a majority runs again, the same question finds a node that serves.
    await cluster.start('n2');
    await cluster.waitReady(20_000);
    const healthy = await recoveryEvidence(cluster, system, [], OP_TIMEOUT_MS);
    expect(healthy.nodes.some((n) => n.read?.type === 'ok')).toBe(true);
  });
});
