import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Address } from '../../../../src/cluster/net/backend.js';
import { httpCall } from '../../../../src/systems/_internals/http.js';

/**
 * What the proxy does with one request: pass it on, pass it on and drop etcd's answer (the client
 * then times out on a request etcd did apply), never pass it on, or answer in etcd's place.
 */
export type ProxyAction =
  'forward' | 'forward-then-drop' | 'drop' | { readonly status: number; readonly body: unknown };

export interface GatewayProxy {
  readonly address: Address;
  close(): Promise<void>;
}

const FORWARD_TIMEOUT_MS = 5_000;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/**
 * An HTTP proxy in front of one etcd gateway, for tests that need something to happen at an exact
 * point of a client's exchange (another write between its snapshot and its commit, a lost reply):
 * `intercept` sees each request's path and JSON body before anything is passed on, and says what
 * to do with it.
 */
export async function gatewayProxy(
  target: Address,
  intercept: (path: string, body: unknown) => Promise<ProxyAction>,
): Promise<GatewayProxy> {
  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = req.url ?? '/';
      const action = await intercept(path, JSON.parse(text) as unknown);
      if (action === 'drop') return;
      if (typeof action === 'object') {
        res.writeHead(action.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(action.body));
        return;
      }
      const outcome = await httpCall({
        address: target,
        method: 'POST',
        path,
        body: text,
        timeoutMs: FORWARD_TIMEOUT_MS,
      });
      if (action === 'forward-then-drop') return;
      if (outcome.kind !== 'response') {
        res.destroy();
        return;
      }
      res.writeHead(outcome.status, { 'content-type': 'application/json' });
      res.end(outcome.body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: { host: '127.0.0.1', port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
