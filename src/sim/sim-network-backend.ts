import type { Link, NetworkBackend } from '../cluster/net/backend.js';
import type { PacketParams } from '../core/fault.js';
import type { SimNetwork } from './network.js';

/**
 * The simulated network as the fault families see a network backend: the links they compute are
 * cut, degraded and healed in the world (with its partition mode's semantics: proxy or netns).
 */
export class SimNetworkBackend implements Pick<NetworkBackend, 'cut' | 'degrade' | 'heal'> {
  constructor(private readonly network: SimNetwork) {}

  cut(links: readonly Link[]): Promise<void> {
    this.network.cut(links);
    return Promise.resolve();
  }

  degrade(links: readonly Link[], params: PacketParams): Promise<void> {
    this.network.degrade(links, {
      ...(params.delayMs !== undefined ? { delayMs: params.delayMs } : {}),
      ...(params.lossPct !== undefined ? { lossPct: params.lossPct } : {}),
      ...(params.dupPct !== undefined ? { dupPct: params.dupPct } : {}),
    });
    return Promise.resolve();
  }

  heal(): Promise<void> {
    this.network.heal();
    return Promise.resolve();
  }
}
