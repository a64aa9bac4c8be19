import { describe, expect, it } from 'vitest';

import { FixedPorts } from '../../../../src/cluster/net/_internals/fixed-ports.js';

describe('FixedPorts', () => {
  const addresses: Record<string, string> = { n1: '10.0.0.1', n2: '10.0.0.2' };
  const ports = new FixedPorts({ client: 7000, peer: 7001 }, (node) => {
    const address = addresses[node];
    if (address === undefined) throw new Error(`unknown node "${node}"`);
    return address;
  });

  it("gives each node its own address with the service's port", () => {
    expect(ports.at('n1', 'client')).toEqual({ host: '10.0.0.1', port: 7000 });
    expect(ports.at('n2', 'peer')).toEqual({ host: '10.0.0.2', port: 7001 });
    expect(ports.port('peer')).toBe(7001);
  });

  it('names the known services when asked for another, and passes on an unknown node', () => {
    expect(() => ports.port('admin')).toThrow('unknown service "admin" (services: client, peer)');
    expect(() => ports.at('n9', 'client')).toThrow('unknown node "n9"');
  });
});
