import type { Address, Link, NetworkBackend } from '../cluster/net/backend.js';
import type { PacketParams } from '../core/fault.js';
import type { SimNetwork } from './network.js';

/**
 * The simulated network as a run sees a network backend (kind `sim`): the links the fault
 * families compute are cut, degraded and healed in the world (with its partition mode's
 * semantics: proxy or netns); every node is reached at its own address, as on namespaces.
 */
export class SimNetworkBackend implements NetworkBackend {
  readonly kind = 'sim' as const;

  constructor(
    private readonly network: SimNetwork,
    private readonly address: (node: string, service: string) => Address = (node) => ({
      host: node,
      port: 0,
    }),
  ) {}

  listen(node: string, service: string): Address {
    return this.address(node, service);
  }

  dial(_from: string, to: string, service: string): Address {
    return this.address(to, service);
  }

  clientAddress(node: string, service: string): Address {
    return this.address(node, service);
  }

  commandPrefix(): readonly string[] {
    return [];
  }

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

  /** Nothing of the host's to release: the world goes with the run. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
