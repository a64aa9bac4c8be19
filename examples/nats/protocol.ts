/**
 * The NATS client protocol (text, line based, with byte-counted payloads), as the server speaks it
 * to a client: what it sends us, parsed incrementally from TCP chunks, and the lines we send it.
 * https://docs.nats.io/reference/reference-protocols/nats-protocol
 */

/** One message from the server. `headers` is present for HMSG (NATS 2.2+ headers). */
export type ServerOp =
  | { readonly op: 'info'; readonly info: Readonly<Record<string, unknown>> }
  | { readonly op: 'ping' }
  | { readonly op: 'pong' }
  | { readonly op: 'ok' }
  | { readonly op: 'err'; readonly message: string }
  | {
      readonly op: 'msg';
      readonly subject: string;
      readonly sid: string;
      readonly reply?: string;
      readonly headers?: Headers;
      readonly payload: Buffer;
    };

/** A parsed header block: `NATS/1.0 503 No Responders` and `Key: Value` lines. */
export interface Headers {
  /** The inline status code (`503` for no responders), when the block has one. */
  readonly status?: number;
  readonly description?: string;
  readonly fields: ReadonlyMap<string, readonly string[]>;
}

const CRLF = Buffer.from('\r\n');
const HEADER_VERSION = 'NATS/1.0';

/** A protocol violation: the connection cannot be trusted any more. */
export class NatsProtocolError extends Error {
  readonly code = 'nats-protocol';
}

/** Parses a header block (with its trailing empty line). */
export function parseHeaders(block: Buffer): Headers {
  const lines = block.toString('utf8').split('\r\n');
  const first = lines[0] ?? '';
  if (!first.startsWith(HEADER_VERSION)) {
    throw new NatsProtocolError(`header block does not start with ${HEADER_VERSION}: ${first.slice(0, 40)}`);
  }
  const status = /^NATS\/1\.0 (\d{3})(?: (.*))?$/.exec(first);
  const fields = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new NatsProtocolError(`bad header line: ${line.slice(0, 40)}`);
    const key = line.slice(0, colon).trim();
    const values = fields.get(key) ?? [];
    values.push(line.slice(colon + 1).trim());
    fields.set(key, values);
  }
  return {
    ...(status ? { status: Number(status[1]) } : {}),
    ...(status?.[2] !== undefined ? { description: status[2] } : {}),
    fields,
  };
}

/** Encodes a header block for HPUB: the version line, `Key: Value` lines, an empty line. */
export function encodeHeaders(fields: Readonly<Record<string, string>>): Buffer {
  const lines = [HEADER_VERSION, ...Object.entries(fields).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
}

/** `PUB subject [reply] size` or `HPUB subject [reply] hsize size`, with the payload and CRLF. */
export function encodePublish(
  subject: string,
  reply: string | undefined,
  payload: Buffer,
  headers?: Readonly<Record<string, string>>,
): Buffer {
  const replyPart = reply === undefined ? '' : ` ${reply}`;
  if (headers === undefined) {
    return Buffer.concat([Buffer.from(`PUB ${subject}${replyPart} ${payload.length}\r\n`), payload, CRLF]);
  }
  const block = encodeHeaders(headers);
  const total = block.length + payload.length;
  return Buffer.concat([
    Buffer.from(`HPUB ${subject}${replyPart} ${block.length} ${total}\r\n`),
    block,
    payload,
    CRLF,
  ]);
}

interface PendingMsg {
  readonly subject: string;
  readonly sid: string;
  readonly reply?: string;
  readonly headerBytes: number;
  readonly totalBytes: number;
}

/**
 * Turns the server's byte stream into {@link ServerOp}s. Feed it each chunk as it arrives; it keeps
 * a partial line or payload until the rest comes. Throws {@link NatsProtocolError} on a line it
 * does not know.
 */
export class ProtocolParser {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: PendingMsg | undefined;

  feed(chunk: Buffer): ServerOp[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const ops: ServerOp[] = [];
    for (;;) {
      if (this.pending) {
        const msg = this.pending;
        if (this.buffer.length < msg.totalBytes + CRLF.length) break;
        const headerBlock = this.buffer.subarray(0, msg.headerBytes);
        const payload = Buffer.from(this.buffer.subarray(msg.headerBytes, msg.totalBytes));
        if (!this.buffer.subarray(msg.totalBytes, msg.totalBytes + CRLF.length).equals(CRLF)) {
          throw new NatsProtocolError(`payload of ${msg.subject} is not followed by CRLF`);
        }
        this.buffer = this.buffer.subarray(msg.totalBytes + CRLF.length);
        this.pending = undefined;
        ops.push({
          op: 'msg',
          subject: msg.subject,
          sid: msg.sid,
          ...(msg.reply !== undefined ? { reply: msg.reply } : {}),
          ...(msg.headerBytes > 0 ? { headers: parseHeaders(headerBlock) } : {}),
          payload,
        });
        continue;
      }
      const end = this.buffer.indexOf(CRLF);
      if (end < 0) break;
      const line = this.buffer.subarray(0, end).toString('utf8');
      this.buffer = this.buffer.subarray(end + CRLF.length);
      const op = this.control(line);
      if (op) ops.push(op);
    }
    return ops;
  }

  /** One control line; a MSG/HMSG line sets `pending` and returns nothing yet. */
  private control(line: string): ServerOp | undefined {
    const space = line.indexOf(' ');
    const verb = (space < 0 ? line : line.slice(0, space)).toUpperCase();
    const rest = space < 0 ? '' : line.slice(space + 1).trim();
    switch (verb) {
      case 'PING':
        return { op: 'ping' };
      case 'PONG':
        return { op: 'pong' };
      case '+OK':
        return { op: 'ok' };
      case '-ERR':
        return { op: 'err', message: rest.replace(/^'(.*)'$/, '$1') };
      case 'INFO':
        return { op: 'info', info: JSON.parse(rest) as Record<string, unknown> };
      case 'MSG': {
        // MSG <subject> <sid> [reply-to] <#bytes>
        const args = rest.split(/\s+/);
        if (args.length !== 3 && args.length !== 4) throw new NatsProtocolError(`bad MSG line: ${line}`);
        const size = byteCount(args[args.length - 1], line);
        this.pending = {
          subject: args[0],
          sid: args[1],
          ...(args.length === 4 ? { reply: args[2] } : {}),
          headerBytes: 0,
          totalBytes: size,
        };
        return undefined;
      }
      case 'HMSG': {
        // HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>
        const args = rest.split(/\s+/);
        if (args.length !== 4 && args.length !== 5) throw new NatsProtocolError(`bad HMSG line: ${line}`);
        const headerBytes = byteCount(args[args.length - 2], line);
        const totalBytes = byteCount(args[args.length - 1], line);
        if (headerBytes > totalBytes) throw new NatsProtocolError(`bad HMSG sizes: ${line}`);
        this.pending = {
          subject: args[0],
          sid: args[1],
          ...(args.length === 5 ? { reply: args[2] } : {}),
          headerBytes,
          totalBytes,
        };
        return undefined;
      }
      default:
        throw new NatsProtocolError(`unknown protocol line: ${line.slice(0, 80)}`);
    }
  }
}

function byteCount(text: string, line: string): number {
  if (!/^\d+$/.test(text)) throw new NatsProtocolError(`bad byte count in: ${line}`);
  return Number(text);
}
