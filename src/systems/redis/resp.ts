import { connect, type Socket } from 'node:net';

import type { Address } from '../../cluster/net/backend.js';

/** A RESP2 reply: error replies are values too (`{ error }`), not exceptions. */
export type RespValue = string | number | null | { readonly error: string } | readonly RespValue[];

export function isRespError(value: RespValue): value is { readonly error: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'error' in value;
}

export function encodeCommand(args: readonly string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(''));
}

const CRLF_BYTES = 2;

/** Incremental RESP2 parser: feed bytes, take complete replies. */
export class RespParser {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RespValue[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: RespValue[] = [];
    for (;;) {
      const parsed = this.parse(0);
      if (parsed === undefined) break;
      out.push(parsed.value);
      this.buffer = this.buffer.subarray(parsed.end);
    }
    return out;
  }

  private parse(offset: number): { value: RespValue; end: number } | undefined {
    const lineEnd = this.buffer.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const kind = String.fromCharCode(this.buffer[offset]);
    const line = this.buffer.toString('utf8', offset + 1, lineEnd);
    const next = lineEnd + CRLF_BYTES;
    switch (kind) {
      case '+':
        return { value: line, end: next };
      case '-':
        return { value: { error: line }, end: next };
      case ':':
        return { value: Number(line), end: next };
      case '$': {
        const length = Number(line);
        if (length < 0) return { value: null, end: next };
        if (this.buffer.length < next + length + CRLF_BYTES) return undefined;
        return { value: this.buffer.toString('utf8', next, next + length), end: next + length + CRLF_BYTES };
      }
      case '*': {
        const count = Number(line);
        if (count < 0) return { value: null, end: next };
        const items: RespValue[] = [];
        let end = next;
        for (let i = 0; i < count; i++) {
          const item = this.parse(end);
          if (item === undefined) return undefined;
          items.push(item.value);
          end = item.end;
        }
        return { value: items, end };
      }
      default:
        throw new Error(`not a RESP reply (type byte ${JSON.stringify(kind)})`);
    }
  }
}

export type RespOutcome =
  | { readonly kind: 'reply'; readonly value: RespValue }
  /** The command was certainly not delivered (could not connect). */
  | { readonly kind: 'refused'; readonly error: string }
  /** The command may have been executed. */
  | { readonly kind: 'timeout' | 'lost'; readonly error: string };

/**
 * One connection, one command at a time, no queue and no resend: a command that times out or
 * loses its connection reports it, and the connection is closed (a late reply is never matched to
 * a later command).
 */
export class RespConnection {
  private readonly parser = new RespParser();
  private waiting: ((outcome: RespOutcome) => void) | undefined;
  private broken = false;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      let replies: RespValue[];
      try {
        replies = this.parser.push(chunk);
      } catch (error) {
        this.fail('lost', String(error));
        return;
      }
      for (const value of replies) this.settle({ kind: 'reply', value });
    });
    socket.on('error', (e) => {
      this.fail('lost', e.message);
    });
    socket.on('close', () => {
      this.fail('lost', 'connection closed');
    });
  }

  get usable(): boolean {
    return !this.broken;
  }

  static open(address: Address, timeoutMs: number): Promise<RespConnection | { error: string }> {
    return new Promise((resolve) => {
      const socket = connect({ host: address.host, port: address.port });
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ error: `connect to ${address.host}:${address.port} timed out after ${timeoutMs} ms` });
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new RespConnection(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ error: `connect to ${address.host}:${address.port}: ${e.message}` });
      });
    });
  }

  command(args: readonly string[], timeoutMs: number): Promise<RespOutcome> {
    if (this.broken) return Promise.resolve({ kind: 'refused', error: 'connection already closed' });
    if (this.waiting) throw new Error('RespConnection runs one command at a time');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.fail('timeout', `no reply within ${timeoutMs} ms`);
      }, timeoutMs);
      this.waiting = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      this.socket.write(encodeCommand(args));
    });
  }

  close(): void {
    this.broken = true;
    this.socket.destroy();
  }

  private settle(outcome: RespOutcome): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(outcome);
  }

  private fail(kind: 'timeout' | 'lost', error: string): void {
    this.broken = true;
    this.socket.destroy();
    this.settle({ kind, error });
  }
}

/** Opens a connection, runs one command, closes it. */
export async function respOnce(
  address: Address,
  args: readonly string[],
  timeoutMs: number,
): Promise<RespOutcome> {
  const conn = await RespConnection.open(address, timeoutMs);
  if (!(conn instanceof RespConnection)) return { kind: 'refused', error: conn.error };
  try {
    return await conn.command(args, timeoutMs);
  } finally {
    conn.close();
  }
}
