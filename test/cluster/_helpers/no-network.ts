import type { Address, NetworkBackend } from '../../../src/cluster/net/backend.js';

const ADDRESS: Address = { host: '127.0.0.1', port: 1 };

/**
 * A network for a `Cluster` whose nodes never talk to each other (`sleep` processes): every
 * address is one unused loopback port, and cuts and heals do nothing.
 */
export const noNetwork: NetworkBackend = {
  kind: 'proxy',
  listen: () => ADDRESS,
  dial: () => ADDRESS,
  clientAddress: () => ADDRESS,
  commandPrefix: () => [],
  cut: () => Promise.resolve(),
  degrade: () => Promise.resolve(),
  heal: () => Promise.resolve(),
  onEvent: () => undefined,
  close: () => Promise.resolve(),
};
