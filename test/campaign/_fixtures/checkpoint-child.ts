// A fuzzer process that takes one big checkpoint: the test SIGKILLs it mid-copy.
// argv: <runDir> <files per node>
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Checkpoints } from '../../../src/campaign/checkpoints.js';
import { Cluster } from '../../../src/cluster/cluster.js';
import { noNetwork } from '../../cluster/_helpers/no-network.js';
import { ResourceRegistry } from '../../../src/cluster/resources.js';
import type { SystemAdapter } from '../../../src/systems/system.js';

const [runDir, filesText] = process.argv.slice(2);
const FILE_BYTES = 1024 ** 2;
const system: SystemAdapter = {
  name: 'sleepers',
  services: ['client'],
  peerServices: [],
  crashPatterns: [],
  doctor: () => Promise.resolve([]),
  launch: () => ({ command: 'sleep', args: ['120'] }),
  ready: () => Promise.resolve(true),
  client: () => {
    throw new Error('no clients here');
  },
};
const runId = `cpchild${process.pid}`;
const registry = new ResourceRegistry(runId, runDir);
const cluster = new Cluster({
  system,
  nodes: ['n1', 'n2', 'n3'],
  runDir,
  runId,
  network: noNetwork,
  registry,
});
for (const node of cluster.nodes) {
  for (let i = 0; i < Number(filesText); i++) {
    writeFileSync(join(cluster.dataDir(node), `f${i}`), Buffer.alloc(FILE_BYTES, i));
  }
}
await cluster.startAll();
process.stdout.write(`ready ${cluster.nodes.map((n) => cluster.pidOf(n)).join(' ')}\n`);
new Checkpoints(runDir, registry, { keep: 2, capBytes: 1024 ** 4 }).take(0, cluster, {
  system: 'sleepers',
  keysFrom: 0,
  takenAtMs: 0,
  network: { kind: 'proxy' },
  clockOffsetMs: () => 0,
});
process.stdout.write('done\n');
await cluster.close();
registry.releaseAll();
