import type { Address } from '../backend.js';

/**
 * Where nodes listen when every node has its own address and the same port for each service
 * (namespaces, SSH hosts): a node listens, is dialled and is reached by clients at its address and
 * the service's port.
 */
export class FixedPorts {
  constructor(
    private readonly services: Readonly<Record<string, number>>,
    private readonly addressOf: (node: string) => string,
  ) {}

  /** The port of `service` on every node; an unknown service is an error naming the known ones. */
  port(service: string): number {
    const port = this.services[service];
    if (port === undefined) {
      throw new Error(`unknown service "${service}" (services: ${Object.keys(this.services).join(', ')})`);
    }
    return port;
  }

  /** `node`'s address and `service`'s port: what it listens on, is dialled at and is reached by clients at. */
  at(node: string, service: string): Address {
    return { host: this.addressOf(node), port: this.port(service) };
  }
}
