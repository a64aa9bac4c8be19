import type { ResourceRegistry } from '../../cluster/resources.js';
import type { RunParts } from '../create-run.js';

/**
 * Stops whatever the run started, however far it got: the workload, the observers, the clocks,
 * the cluster and the network (their failures ignored), then releases its resources.
 */
export async function stopRun(parts: RunParts | undefined, registry: ResourceRegistry): Promise<void> {
  parts?.workload.interrupt();
  await parts?.workload.stop().catch(() => undefined);
  await parts?.observation.stop().catch(() => undefined);
  parts?.clocks?.close();
  // Clocks on other hosts are reset by commands there: they land before the connections close.
  await parts?.clocks?.settled().catch(() => undefined);
  await parts?.cluster.close().catch(() => undefined);
  await parts?.network.close().catch(() => undefined);
  parts?.simOutput?.close();
  registry.releaseResources();
}
