import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

import type { Address } from '../../src/index.js';
import { encodePublish, type Headers, ProtocolParser, type ServerOp } from './protocol.js';

/** What one request got back. */
export type RequestOutcome =
  | { readonly kind: 'reply'; readonly headers?: Headers; readonly payload: Buffer }
  /** Status 503: no subscriber had interest, so the message went nowhere. */
  | { readonly kind: 'no-responders' }
  /** Sent, and no reply in time: it may have been acted on. */
  | { readonly kind: 'timeout'; readonly error: string }
  /** The connection broke after the request was written: it may have been acted on. */
  | { readonly kind: 'lost'; readonly error: string }
  /** Nothing was written: the connection was already unusable. */
  | { readonly kind: 'not-sent'; readonly error: string };

/** Why a connection could not be opened (nothing was sent). */
export interface OpenFailure {
  readonly refused: boolean;
  readonly error: string;
}

interface Waiter {
  readonly resolve: (outcome: RequestOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

const NO_RESPONDERS = 503;
const REPLY_SID = '1';

/** The CONNECT options: headers and no-responders replies on, no +OK after every line. */
const CONNECT_OPTIONS = {
  verbose: false,
  pedantic: false,
  headers: true,
  no_responders: true,
  protocol: 1,
  lang: 'mallory-example',
  version: '0.1.0',
  name: 'mallory',
};

/**
 * One client connection to one NATS server, for request/reply: a single wildcard subscription on
 * a private inbox receives every reply, matched to its request by the last token of the reply
 * subject. It answers the server's PINGs; it does not reconnect — a broken connection stays
 * broken, and its owner opens a new one.
 */
export class NatsConnection {
  private readonly parser = new ProtocolParser();
  private readonly waiters = new Map<string, Waiter>();
  private readonly inbox = `_INBOX.${randomBytes(8).toString('hex')}`;
  private nextId = 0;
  private broken: string | undefined;

  private constructor(
    private readonly socket: Socket,
    /** The server's INFO (its `server_name`, `version`, …). */
    readonly info: Readonly<Record<string, unknown>>,
  ) {
    socket.on('data', (chunk: Buffer) => {
      let ops: ServerOp[];
      try {
        ops = this.parser.feed(chunk);
      } catch (error) {
        this.fail(`protocol error: ${(error as Error).message}`);
        return;
      }
      for (const op of ops) this.handle(op);
    });
    socket.on('error', (error) => {
      this.fail(error.message);
    });
    socket.on('close', () => {
      this.fail('connection closed');
    });
    this.write(`SUB ${this.inbox}.* ${REPLY_SID}\r\n`);
  }

  /**
   * Connects, reads the server's INFO, sends CONNECT and a PING, and resolves once the PONG came
   * back (the server accepted the connection), within `timeoutMs`.
   */
  static open(address: Address, timeoutMs: number): Promise<NatsConnection | OpenFailure> {
    return new Promise((resolve) => {
      const socket = connect({ host: address.host, port: address.port });
      socket.setNoDelay(true);
      const parser = new ProtocolParser();
      let info: Readonly<Record<string, unknown>> | undefined;
      let settled = false;
      /** Ends the handshake: its listeners go before the connection (or the failure) takes over. */
      const finish = (result: () => NatsConnection | OpenFailure): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        for (const event of ['data', 'error', 'close']) socket.removeAllListeners(event);
        const outcome = result();
        if (!(outcome instanceof NatsConnection)) {
          // A late error of a socket we gave up on must not become an uncaught exception.
          socket.on('error', () => undefined);
          socket.destroy();
        }
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        finish(() => ({
          refused: false,
          error: `no handshake with ${address.host}:${address.port} in ${timeoutMs} ms`,
        }));
      }, timeoutMs);
      socket.on('error', (error: NodeJS.ErrnoException) => {
        finish(() => ({ refused: error.code === 'ECONNREFUSED', error: error.message }));
      });
      socket.once('close', () => {
        finish(() => ({ refused: false, error: 'the server closed the connection during the handshake' }));
      });
      socket.on('data', (chunk: Buffer) => {
        let ops: ServerOp[];
        try {
          ops = parser.feed(chunk);
        } catch (error) {
          finish(() => ({ refused: false, error: (error as Error).message }));
          return;
        }
        for (const op of ops) {
          if (op.op === 'info' && info === undefined) {
            info = op.info;
            socket.write(`CONNECT ${JSON.stringify(CONNECT_OPTIONS)}\r\nPING\r\n`);
          } else if (op.op === 'pong' && info !== undefined) {
            const accepted = info;
            finish(() => new NatsConnection(socket, accepted));
            return;
          } else if (op.op === 'err') {
            finish(() => ({ refused: false, error: `-ERR ${op.message}` }));
            return;
          } else if (op.op === 'ping') {
            socket.write('PONG\r\n');
          }
        }
      });
    });
  }

  get usable(): boolean {
    return this.broken === undefined;
  }

  /**
   * Publishes `payload` (with `headers`, as HPUB) on `subject` with a reply subject of our inbox,
   * and waits up to `timeoutMs` for the one reply.
   */
  request(
    subject: string,
    payload: Buffer | string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<RequestOutcome> {
    if (this.broken !== undefined) return Promise.resolve({ kind: 'not-sent', error: this.broken });
    const id = String(this.nextId++);
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        resolve({ kind: 'timeout', error: `no reply to ${subject} in ${timeoutMs} ms` });
      }, timeoutMs);
      this.waiters.set(id, { resolve, timer });
      this.socket.write(encodePublish(subject, `${this.inbox}.${id}`, body, headers));
    });
  }

  close(): void {
    this.fail('closed by the client');
    this.socket.destroy();
  }

  private write(text: string): void {
    if (this.broken === undefined) this.socket.write(text);
  }

  private handle(op: ServerOp): void {
    switch (op.op) {
      case 'ping':
        this.write('PONG\r\n');
        return;
      case 'err':
        // Every -ERR the server sends a client after CONNECT closes the connection, except
        // permission violations (we have no permissions configured).
        this.fail(`-ERR ${op.message}`);
        this.socket.destroy();
        return;
      case 'msg': {
        if (op.sid !== REPLY_SID) return;
        const id = op.subject.slice(this.inbox.length + 1);
        const waiter = this.waiters.get(id);
        if (!waiter) return;
        this.waiters.delete(id);
        clearTimeout(waiter.timer);
        if (op.headers?.status === NO_RESPONDERS && op.payload.length === 0) {
          waiter.resolve({ kind: 'no-responders' });
        } else {
          waiter.resolve({
            kind: 'reply',
            ...(op.headers ? { headers: op.headers } : {}),
            payload: op.payload,
          });
        }
        return;
      }
      default:
        return;
    }
  }

  /** Marks the connection broken and answers every open request `lost`. */
  private fail(error: string): void {
    if (this.broken !== undefined) return;
    this.broken = error;
    for (const [id, waiter] of this.waiters) {
      clearTimeout(waiter.timer);
      this.waiters.delete(id);
      waiter.resolve({ kind: 'lost', error });
    }
  }
}
