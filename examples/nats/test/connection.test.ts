import { createServer, type Server, type Socket } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { NatsConnection } from '../connection.js';

/** A fake server speaking just enough of the protocol: `onPub` answers each PUB/HPUB it gets. */
interface Fake {
  readonly server: Server;
  readonly port: number;
  readonly sockets: Socket[];
  readonly lines: string[];
}

type OnPub = (socket: Socket, subject: string, reply: string, payload: string) => void;

async function fake(onPub: OnPub, greet = true): Promise<Fake> {
  const sockets: Socket[] = [];
  const lines: string[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    if (greet) socket.write('INFO {"server_name":"n1","headers":true} \r\n');
    let buffer = '';
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        const pub = /^H?PUB (\S+) (\S+) (?:\d+ )?(\d+)$/.exec(line);
        if (pub) {
          const size = Number(pub[3]);
          if (buffer.length < end + 2 + size + 2) return;
          const payload = buffer.slice(end + 2, end + 2 + size);
          buffer = buffer.slice(end + 2 + size + 2);
          lines.push(line);
          onPub(socket, pub[1], pub[2], payload);
          continue;
        }
        buffer = buffer.slice(end + 2);
        lines.push(line);
        if (line === 'PING') socket.write('PONG\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, sockets, lines };
}

const reply = (socket: Socket, subject: string, body: string): void => {
  socket.write(`MSG ${subject} 1 ${Buffer.byteLength(body)}\r\n${body}\r\n`);
};

describe('NatsConnection', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
  });
  async function open(onPub: OnPub, greet = true): Promise<{ conn: NatsConnection; server: Fake }> {
    const server = await fake(onPub, greet);
    servers.push(server.server);
    const conn = await NatsConnection.open({ host: '127.0.0.1', port: server.port }, 1000);
    if (!(conn instanceof NatsConnection)) throw new Error(conn.error);
    return { conn, server };
  }

  it('handshakes (CONNECT with headers and no-responders, PING), subscribes to its inbox and gets replies', async () => {
    const { conn, server } = await open((socket, subject, replyTo, payload) => {
      reply(socket, replyTo, `{"echo":"${subject} ${payload}"}`);
    });
    expect(conn.info.server_name).toBe('n1');
    const outcome = await conn.request('$KV.b.k', '7', 1000);
    expect(outcome.kind).toBe('reply');
    expect(outcome.kind === 'reply' && outcome.payload.toString()).toBe('{"echo":"$KV.b.k 7"}');
    const connect = server.lines.find((l) => l.startsWith('CONNECT '));
    expect(JSON.parse(connect!.slice('CONNECT '.length))).toMatchObject({
      headers: true,
      no_responders: true,
    });
    expect(server.lines.some((l) => /^SUB _INBOX\.[0-9a-f]+\.\* 1$/.test(l))).toBe(true);
    conn.close();
  });

  it('matches concurrent replies to their requests, whatever their order', async () => {
    const pending: (() => void)[] = [];
    const { conn } = await open((socket, _subject, replyTo, payload) => {
      pending.push(() => {
        reply(socket, replyTo, payload);
      });
      if (pending.length === 2) for (const send of pending.reverse()) send();
    });
    const [a, b] = await Promise.all([conn.request('x', 'first', 1000), conn.request('x', 'second', 1000)]);
    expect(a.kind === 'reply' && a.payload.toString()).toBe('first');
    expect(b.kind === 'reply' && b.payload.toString()).toBe('second');
    conn.close();
  });

  it('tells no-responders (503) apart from a reply', async () => {
    const { conn } = await open((socket, _subject, replyTo) => {
      socket.write(`HMSG ${replyTo} 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n`);
    });
    expect(await conn.request('foo', 'x', 1000)).toEqual({ kind: 'no-responders' });
    conn.close();
  });

  it('answers timeout when no reply comes, and the connection stays usable', async () => {
    const { conn } = await open(() => undefined);
    expect((await conn.request('foo', 'x', 50)).kind).toBe('timeout');
    expect(conn.usable).toBe(true);
    conn.close();
  });

  it('answers lost for requests open when the server closes, and not-sent afterwards', async () => {
    const { conn, server } = await open(() => {
      server.sockets[0].destroy();
    });
    expect((await conn.request('foo', 'x', 1000)).kind).toBe('lost');
    expect(conn.usable).toBe(false);
    expect((await conn.request('foo', 'x', 1000)).kind).toBe('not-sent');
  });

  it('breaks on -ERR and answers the server’s PINGs', async () => {
    const { conn, server } = await open((socket, _subject, _replyTo, payload) => {
      socket.write(payload === 'ping' ? 'PING\r\n' : "-ERR 'Stale Connection'\r\n");
    });
    void conn.request('foo', 'ping', 1000);
    await new Promise((r) => setTimeout(r, 50));
    expect(server.lines).toContain('PONG');
    expect(await conn.request('foo', 'err', 1000)).toEqual({ kind: 'lost', error: '-ERR Stale Connection' });
  });

  it('fails to open: refused, or no INFO within the timeout', async () => {
    const closed = await fake(() => undefined);
    await new Promise((resolve) => closed.server.close(resolve));
    const refused = await NatsConnection.open({ host: '127.0.0.1', port: closed.port }, 1000);
    expect(refused).toMatchObject({ refused: true });
    const silent = await fake(() => undefined, false);
    servers.push(silent.server);
    const timedOut = await NatsConnection.open({ host: '127.0.0.1', port: silent.port }, 100);
    expect(timedOut).toMatchObject({
      refused: false,
      error: expect.stringContaining('no handshake') as unknown,
    });
    for (const s of silent.sockets) s.destroy();
  });
});
