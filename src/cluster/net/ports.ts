import { createServer, type Server } from 'node:net';

/**
 * Node ports come from below the kernel's ephemeral range (32768–60999 on Linux), so that between
 * choosing a port and the node binding it, no outgoing connection or port-0 listener of this or
 * another run can take it.
 */
const PORT_LOW = 20_000;
const PORT_HIGH = 32_000;
const MAX_TRIES = 1000;

function tryListen(port: number, host: string): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => {
      resolve(undefined);
    });
    server.listen({ port, host, exclusive: true }, () => {
      resolve(server);
    });
  });
}

/** `count` distinct free TCP ports on `host`, outside the ephemeral range. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count && tries < MAX_TRIES; tries++) {
      const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW));
      if (ports.includes(port)) continue;
      const server = await tryListen(port, host);
      if (server) {
        held.push(server);
        ports.push(port);
      }
    }
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
  if (ports.length < count) throw new Error(`could not find ${count} free ports on ${host}`);
  return ports;
}
