/**
 * What the FUSE disk layer costs kvraft: a 3-node kvraft cluster (proxy network) with and without
 * the layer mounted over every data dir, `workers` clients writing as fast as they can for
 * `seconds`, twice each way, alternating. Prints acknowledged writes per second and the write
 * latency (p50, p99) of each round, then the ratio of the medians. Needs `npm run build`, root (or
 * fusermount3) and `apt-get install -y gcc libfuse3-dev fuse3 pkg-config`.
 * `npx tsx bench/disk-layer.ts [seconds=10] [workers=8] [rounds=2]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Cluster } from '../src/cluster/cluster.js';
import { buildDiskLayer, DiskLayer } from '../src/cluster/disk-layer.js';
import { localLayout } from '../src/cluster/runtime/local-layout.js';
import { ProxyBackend } from '../src/cluster/net/proxy.js';
import { ResourceRegistry } from '../src/cluster/resources.js';
import { findLeader, kvraft } from '../src/systems/kvraft/index.js';

const SECONDS = Number(process.argv[2] ?? 10);
const WORKERS = Number(process.argv[3] ?? 8);
const ROUNDS = Number(process.argv[4] ?? 2);
const NODES = ['n1', 'n2', 'n3'];
const OP_TIMEOUT_MS = 2000;
const READY_MS = 30_000;

interface Round {
  readonly writesPerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function round(binary: string | undefined, index: number): Promise<Round> {
  const root = mkdtempSync(join(tmpdir(), 'mallory-bench-disk-'));
  process.env.MALLORY_STATE_DIR = join(root, 'state');
  const system = kvraft.create({ bugs: [] });
  const net = await ProxyBackend.create({
    nodes: NODES,
    services: system.services,
    peerServices: system.peerServices,
    seed: index,
  });
  const registry = new ResourceRegistry(`bench-disk-${process.pid}-${index}`, root);
  const cluster = new Cluster({
    system,
    nodes: NODES,
    runDir: root,
    runId: `benchdisk${process.pid}${index}`,
    network: net,
    registry,
    ...(binary !== undefined
      ? { disk: new DiskLayer(localLayout(`benchdisk${process.pid}${index}`), registry, binary) }
      : {}),
  });
  try {
    await cluster.startAll();
    if (!(await cluster.waitReady(READY_MS))) throw new Error('kvraft did not become ready');
    const leader = (await findLeader(cluster)) ?? NODES[0];
    const latencies: number[] = [];
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        const client = system.client(leader, cluster, OP_TIMEOUT_MS);
        for (let i = 0; Date.now() < end; i++) {
          const start = performance.now();
          const result = await client.write(`k${w}`, i);
          if (result.type === 'ok') latencies.push(performance.now() - start);
        }
        await client.close();
      }),
    );
    latencies.sort((a, b) => a - b);
    return {
      writesPerS: latencies.length / SECONDS,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
    };
  } finally {
    await cluster.close();
    await net.close();
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  }
}

const binary = await buildDiskLayer();
console.log(`kvraft, 3 nodes, ${WORKERS} writers to the leader, ${SECONDS} s per round`);
const results: Record<'plain' | 'fuse', number[]> = { plain: [], fuse: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of ['plain', 'fuse'] as const) {
    const x = await round(mode === 'fuse' ? binary : undefined, 2 * r + (mode === 'fuse' ? 1 : 0));
    results[mode].push(x.writesPerS);
    console.log(
      `${mode === 'fuse' ? 'with the layer   ' : 'without the layer'}  ${x.writesPerS.toFixed(0).padStart(6)} writes/s  p50 ${x.p50Ms.toFixed(1)} ms  p99 ${x.p99Ms.toFixed(1)} ms`,
    );
  }
}
const median = (xs: readonly number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
console.log(`with / without: ${(median(results.fuse) / median(results.plain)).toFixed(2)}×`);
