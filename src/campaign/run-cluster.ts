import type { Cluster } from '../cluster/cluster.js';
import type { NemesisCluster } from '../nemesis/nemesis.js';

/**
 * What a campaign asks of its cluster: the nemesis's view, starting, a hard reset, the ready wait,
 * where each node's output is and the end. `Cluster` (real processes) is one; a simulated world's
 * `SimCluster` is the other. Checkpoints copy real data dirs: they ask for a `Cluster` itself.
 */
export type RunCluster = NemesisCluster &
  Pick<Cluster, 'onHosts' | 'members' | 'startAll' | 'restartFresh' | 'logDir' | 'close'>;
