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

/**
 * `count` distinct free TCP ports on `host`, outside the ephemeral range. Where `wanted[i]` is
 * given and free, port i is that one (a run started from a checkpoint takes the ports its data
 * names); the others are chosen at random.
 */
export async function freePorts(
  count: number,
  host = '127.0.0.1',
  wanted: readonly (number | undefined)[] = [],
): Promise<number[]> {
  const held: Server[] = [];
  const ports: (number | undefined)[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const port = wanted[i];
      const server = port === undefined || ports.includes(port) ? undefined : await tryListen(port, host);
      if (server) held.push(server);
      ports.push(server ? port : undefined);
    }
    const chosen = ports.filter((p) => p !== undefined).length;
    const fresh: number[] = [];
    for (let tries = 0; chosen + fresh.length < count && tries < MAX_TRIES; tries++) {
      const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW));
      if (ports.includes(port) || fresh.includes(port)) continue;
      const server = await tryListen(port, host);
      if (server) {
        held.push(server);
        fresh.push(port);
      }
    }
    if (chosen + fresh.length < count) throw new Error(`could not find ${count} free ports on ${host}`);
    let next = 0;
    return ports.map((p) => p ?? fresh[next++] ?? 0);
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}
