import { createServer } from 'node:net';

/** Asks the kernel for `count` free TCP ports on loopback (held open together so they differ). */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import('node:net').Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, host, () => {
            resolve(server);
          });
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('no port assigned');
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}
