import { connect, createServer, type Server, type Socket } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import type { Event } from '../../../src/core/event.js';
import { ProxyBackend } from '../../../src/cluster/net/proxy.js';

const NODES = ['n1', 'n2', 'n3'];

function echoServer(port: number): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((s) => s.pipe(s));
    server.listen(port, '127.0.0.1', () => {
      resolve(server);
    });
  });
}

function request(port: number, text: string, timeoutMs = 500): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('timeout');
    }, timeoutMs);
    socket.on('connect', () => socket.write(text));
    socket.on('data', (d) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(d.toString());
    });
    socket.on('error', () => {
      clearTimeout(timer);
      resolve('closed');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
}

describe('ProxyBackend', () => {
  const servers: Server[] = [];
  let backend: ProxyBackend | undefined;
  afterEach(async () => {
    await backend?.close();
    for (const s of servers.splice(0)) s.close();
  });

  async function setUp(): Promise<ProxyBackend> {
    backend = await ProxyBackend.create({
      nodes: NODES,
      services: ['client', 'peer'],
      peerServices: ['peer'],
      seed: 1,
    });
    for (const n of NODES) servers.push(await echoServer(backend.listen(n, 'peer').port));
    return backend;
  }

  it('forwards each directed link through its own proxy and reports send/recv with one message id', async () => {
    const net = await setUp();
    const events: Event[] = [];
    net.onEvent((e) => events.push(e));
    const via = net.dial('n1', 'n2', 'peer');
    expect(via.port).not.toBe(net.listen('n2', 'peer').port);
    expect(net.dial('n3', 'n2', 'peer').port).not.toBe(via.port);
    expect(await request(via.port, 'hello')).toBe('hello');
    const send = events.find((e) => e.type === 'send' && e.node === 'n1');
    const recv = events.find((e) => e.type === 'recv' && e.node === 'n2');
    expect(send?.attrs?.peer).toBe('n2');
    expect(send?.attrs?.bytes).toBe(5);
    expect(recv?.attrs?.msg).toBe(send?.attrs?.msg);
    // the echo comes back as n2 → n1
    expect(events.some((e) => e.type === 'recv' && e.node === 'n1' && e.attrs?.peer === 'n2')).toBe(true);
  });

  it('blackholes a cut link, leaves others up, and recovers on heal', async () => {
    const net = await setUp();
    await net.cut([
      ['n1', 'n2'],
      ['n2', 'n1'],
    ]);
    expect(await request(net.dial('n1', 'n2', 'peer').port, 'x', 300)).toBe('timeout');
    expect(await request(net.dial('n2', 'n1', 'peer').port, 'x', 300)).toBe('timeout');
    expect(await request(net.dial('n1', 'n3', 'peer').port, 'up')).toBe('up');
    await net.heal();
    expect(await request(net.dial('n1', 'n2', 'peer').port, 'back')).toBe('back');
  });

  it('resets an open connection whose data was dropped once the cut heals', async () => {
    const net = await setUp();
    const socket = connect(net.dial('n1', 'n2', 'peer'));
    await new Promise((r) => socket.once('connect', r));
    const closed = new Promise((r) => socket.once('close', r));
    socket.on('error', () => undefined);
    await net.cut([['n1', 'n2']]);
    socket.write('lost');
    await new Promise((r) => setTimeout(r, 50));
    await net.heal();
    await closed;
    expect(socket.destroyed).toBe(true);
  });

  it('delays chunks on a degraded link', async () => {
    const net = await setUp();
    await net.degrade([['n1', 'n2']], { target: 'one', delayMs: 150 });
    const t0 = Date.now();
    expect(await request(net.dial('n1', 'n2', 'peer').port, 'slow', 1000)).toBe('slow');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('keeps a byte stream whole: duplicated packets never reach it, and chunks keep their order when the delay shrinks', async () => {
    const net = await setUp();
    await net.degrade([['n1', 'n2']], { target: 'one', delayMs: 200, dupPct: 100 });
    const socket = connect({ host: '127.0.0.1', port: net.dial('n1', 'n2', 'peer').port });
    let echoed = '';
    socket.on('data', (d: Buffer) => (echoed += d.toString()));
    await new Promise((resolve) => socket.on('connect', resolve));
    for (const text of ['a', 'b', 'c']) {
      socket.write(text);
      await new Promise((r) => setTimeout(r, 20));
    }
    // The delay drops to nothing while a, b and c still wait: d must not overtake them.
    await net.degrade([['n1', 'n2']], { target: 'one', delayMs: 0, dupPct: 100 });
    socket.write('d');
    const deadline = Date.now() + 2000;
    while (echoed.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    expect(echoed).toBe('abcd');
  });

  it('resets connections on a lossy link', async () => {
    const net = await setUp();
    await net.degrade([['n1', 'n2']], { target: 'one', lossPct: 100 });
    expect(await request(net.dial('n1', 'n2', 'peer').port, 'gone', 500)).toBe('closed');
  });

  it('takes the ports a checkpoint recorded where they are free, and names those it could not', async () => {
    const first = await setUp();
    const recorded = first.addresses();
    expect(Object.keys(recorded)).toHaveLength(NODES.length * 2 + NODES.length * (NODES.length - 1));
    expect(recorded['n1/client']).toBe(first.listen('n1', 'client').port);
    expect(recorded['n1>n2/peer']).toBe(first.dial('n1', 'n2', 'peer').port);
    await first.close();
    for (const s of servers.splice(0)) s.close();

    // Something else now holds one node port and one proxy port.
    const squatters = [
      await echoServer(recorded['n2/peer'] ?? 0),
      await echoServer(recorded['n3>n1/peer'] ?? 0),
    ];
    try {
      backend = await ProxyBackend.create({
        nodes: NODES,
        services: ['client', 'peer'],
        peerServices: ['peer'],
        seed: 1,
        pinned: recorded,
      });
      const again = backend.addresses();
      expect(backend.unpinned.sort()).toEqual(['n2/peer', 'n3>n1/peer']);
      for (const [key, port] of Object.entries(recorded)) {
        if (backend.unpinned.includes(key)) expect(again[key]).not.toBe(port);
        else expect(again[key]).toBe(port);
      }
    } finally {
      for (const s of squatters) s.close();
    }
  });
});
