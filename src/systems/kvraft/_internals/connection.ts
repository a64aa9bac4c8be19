import { untilAborted } from '../../../core/fault-call.js';
import type { ClientResponse } from './messages.js';
import type { HostPort, NetSocket, NodeIo, Timer } from '../seams.js';
import { parseObject, readLines } from './wire.js';

/** What a client connection takes from its world: sockets, timers and the wall clock. */
export type ClientIo = Pick<NodeIo, 'net' | 'env'>;

/** How a request ended when no response arrived. */
export type NoResponse =
  { readonly kind: 'unsent'; readonly error: string } | { readonly kind: 'unknown'; readonly error: string };

interface Pending {
  readonly resolve: (result: ClientResponse | NoResponse) => void;
  readonly timer: Timer;
}

/**
 * One client connection to one node's client service, with request ids. A request resolves with
 * the node's response, or `unsent` (the connection never came up: the node did not see it) or
 * `unknown` (timeout or connection lost after sending: it may have taken effect).
 */
export class Connection {
  private socket: NetSocket | undefined;
  private connected = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly address: HostPort,
    private readonly io: ClientIo,
  ) {}

  request(body: Record<string, unknown>, timeoutMs: number): Promise<ClientResponse | NoResponse> {
    const socket = this.open();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = this.io.env.setTimeout(() => {
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

  private open(): NetSocket {
    if (this.socket) return this.socket;
    const socket = this.io.net.connect(this.address);
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
      pending.timer.cancel();
      pending.resolve(raw as unknown as ClientResponse);
    });
    return socket;
  }

  private reset(socket: NetSocket): void {
    this.fail(socket, 'connection reset');
    socket.destroy();
  }

  private fail(socket: NetSocket, error: string): void {
    if (this.socket !== socket) return;
    const kind = this.connected ? 'unknown' : 'unsent';
    this.socket = undefined;
    this.connected = false;
    for (const [id, pending] of this.pending) {
      pending.timer.cancel();
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
  io: ClientIo,
  /** Gives up on the answer when it fires (its outcome then unknown), closing the connection. */
  signal?: AbortSignal,
): Promise<ClientResponse | NoResponse> {
  const connection = new Connection(address, io);
  try {
    const request = connection.request(body, timeoutMs);
    if (signal === undefined) return await request;
    const raced = await untilAborted(request, signal);
    return raced.settled ? raced.value : { kind: 'unknown', error: 'given up: the call was cut short' };
  } finally {
    connection.close();
  }
}
