import { Cluster } from '../../cluster/cluster.js';
import type { NetworkBackend } from '../../cluster/net/backend.js';
import { NetnsBackend } from '../../cluster/net/netns.js';
import { ProxyBackend } from '../../cluster/net/proxy.js';
import type { CheckpointManifest } from '../../store/checkpoint-files.js';
import { firstKeyspace } from './keyspace.js';
import type { LiveRun } from './live-run.js';

/**
 * The schedule's checkpoint, before its workload starts (the cluster healed and serving); says
 * which checkpoints the cap dropped (the newest-K rule drops them every schedule, silently).
 */
export async function takeCheckpoint(live: LiveRun, schedule: number, atMs: number): Promise<void> {
  const { parts, plan, emit } = live;
  const { checkpoints, network, clocks, cluster } = parts;
  // Checkpoints copy real data dirs; a simulated world's disks are the world's (none are taken).
  if (checkpoints === undefined || !(cluster instanceof Cluster)) return;
  const ctx = {
    system: plan.definition.name,
    keysFrom: firstKeyspace(plan) + schedule,
    takenAtMs: atMs,
    network: manifestNetwork(network),
    clockOffsetMs: (node: string) => clocks?.offsetMs(node) ?? 0,
  };
  // On this host the copy is synchronous: nothing else of the fuzzer runs while the nodes are stopped.
  const dropped = cluster.onHosts
    ? await checkpoints.takeFromHosts(schedule, cluster, ctx)
    : checkpoints.take(schedule, cluster, ctx);
  for (const d of dropped.filter((x) => x.reason.includes('cap'))) {
    emit(
      'message',
      `  checkpoint of schedule ${d.schedule + 1} dropped (${Math.round(d.bytes / 1024 ** 2)} MiB): ${d.reason}`,
    );
  }
}

/** The addresses a checkpoint's data dirs may name, for a run started from it to take again. */
function manifestNetwork(network: NetworkBackend): CheckpointManifest['network'] {
  if (network instanceof NetnsBackend) return { kind: 'netns', subnet: network.subnet };
  return network instanceof ProxyBackend ? { kind: 'proxy', ports: network.addresses() } : { kind: 'proxy' };
}
