import net from 'node:net';

import type { ClientResponse } from './messages.js';
import type { HostPort } from './transport.js';
import { parseObject, readLines } from './wire.js';

/** How a request ended when no response arrived. */
export type NoResponse =
  { readonly kind: 'unsent'; readonly error: string } | { readonly kind: 'unknown'; readonly error: string };

interface Pending {
  readonly resolve: (result: ClientResponse | NoResponse) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * One client connection to one node's client service, with request ids. A request resolves with
 * the node's response, or `unsent` (the connection never came up: the node did not see it) or
 * `unknown` (timeout or connection lost after sending: it may have taken effect).
 */
export class Connection {
  private socket: net.Socket | undefined;
  private connected = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly address: HostPort) {}

  request(body: Record<string, unknown>, timeoutMs: number): Promise<ClientResponse | NoResponse> {
    const socket = this.open();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ kind: 'unknown', error: `no response within ${timeoutMs} ms` });
        // A node that hangs (SIGSTOP) keeps the socket; start afresh next time.
        this.reset(socket);
      }, timeoutMs);
      this.pending.set(id, { resolve, timer });
      socket.write(JSON.stringify({ ...body, id }) + '\n');
    });
  }

  close(): void {
    if (this.socket) this.reset(this.socket);
  }

  private open(): net.Socket {
    if (this.socket) return this.socket;
    const socket = net.connect({ host: this.address.host, port: this.address.port });
    this.socket = socket;
    this.connected = false;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      if (this.socket === socket) this.connected = true;
    });
    socket.on('error', () => {
      // 'close' follows
    });
    socket.on('close', () => {
      if (this.socket === socket) this.fail(socket, 'connection closed');
    });
    readLines(socket, (line) => {
      const raw = parseObject(line);
      if (!raw || typeof raw.id !== 'number') return;
      const pending = this.pending.get(raw.id);
      if (!pending) return;
      this.pending.delete(raw.id);
      clearTimeout(pending.timer);
      pending.resolve(raw as unknown as ClientResponse);
    });
    return socket;
  }

  private reset(socket: net.Socket): void {
    this.fail(socket, 'connection reset');
    socket.destroy();
  }

  private fail(socket: net.Socket, error: string): void {
    if (this.socket !== socket) return;
    const kind = this.connected ? 'unknown' : 'unsent';
    this.socket = undefined;
    this.connected = false;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.resolve({ kind, error: kind === 'unsent' ? 'connection refused' : error });
      this.pending.delete(id);
    }
  }
}

/** One request on a fresh connection (admin calls). */
export async function requestOnce(
  address: HostPort,
  body: Record<string, unknown>,
  timeoutMs: number,
): Promise<ClientResponse | NoResponse> {
  const connection = new Connection(address);
  try {
    return await connection.request(body, timeoutMs);
  } finally {
    connection.close();
  }
}
