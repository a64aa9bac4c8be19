import { describe, expect, it } from 'vitest';

import type { NetSocket } from '../../src/systems/kvraft/seams.js';
import type { PartitionMode } from '../../src/sim/network.js';
import { World } from '../../src/sim/world.js';

/** Host `b` listens and records what arrives; host `a` dials it. */
function pair(mode: PartitionMode) {
  const world = new World({ seed: 1, partitionMode: mode, latencyMs: [1, 1], bootDelayMs: [0, 0] });
  const received: { atMs: number; text: string }[] = [];
  const closes: { host: string; atMs: number }[] = [];
  world.start('b', (p) => {
    const server = p.io.net.createServer((socket) => {
      socket.on('data', (text) => received.push({ atMs: world.nowMs, text }));
      socket.on('close', () => closes.push({ host: 'b', atMs: world.nowMs }));
    });
    server.listen(1, 'b');
  });
  let socket: NetSocket | undefined;
  let connected = false;
  world.start('a', (p) => {
    socket = p.io.net.connect({ host: 'b', port: 1 });
    socket.on('connect', () => (connected = true));
    socket.on('close', () => closes.push({ host: 'a', atMs: world.nowMs }));
  });
  return { world, received, closes, socket: () => socket!, connected: () => connected };
}

describe('the simulated network', () => {
  it('delivers in order, one latency later', async () => {
    const { world, received, socket, connected } = pair('netns');
    await world.runUntil('connect', () => (connected() ? true : undefined));
    const sentAt = world.nowMs;
    socket().write('one\n');
    socket().write('two\n');
    await world.run(10);
    expect(received.map((r) => r.text)).toEqual(['one\n', 'two\n']);
    expect(received[0].atMs).toBe(sentAt + 1);
  });

  it('netns-like: a cut holds the bytes and the heal delivers them', async () => {
    const { world, received, closes, socket, connected } = pair('netns');
    await world.runUntil('connect', () => (connected() ? true : undefined));
    world.network.cut([['a', 'b']]);
    socket().write('held\n');
    await world.run(5000);
    expect(received).toEqual([]);
    world.network.heal();
    await world.run(10);
    expect(received.map((r) => r.text)).toEqual(['held\n']);
    expect(closes).toEqual([]);
  });

  it('proxy-like: a cut drops the bytes and the heal resets the connection', async () => {
    const { world, received, closes, socket, connected } = pair('proxy');
    await world.runUntil('connect', () => (connected() ? true : undefined));
    world.network.cut([['b', 'a']]);
    socket().write('lost\n');
    await world.run(5000);
    world.network.heal();
    await world.run(10);
    expect(received).toEqual([]);
    expect(closes.map((c) => c.host).sort()).toEqual(['a', 'b']);
  });

  it('a killed process closes its sockets: the peer sees it one latency later', async () => {
    const { world, closes, connected } = pair('netns');
    await world.runUntil('connect', () => (connected() ? true : undefined));
    const killedAt = world.nowMs;
    world.kill('b');
    await world.run(10);
    expect(closes).toEqual([{ host: 'a', atMs: killedAt + 1 }]);
  });

  it('a paused process gets what arrived, in order, when it resumes', async () => {
    const { world, received, socket, connected } = pair('netns');
    await world.runUntil('connect', () => (connected() ? true : undefined));
    world.pause('b');
    socket().write('one\n');
    socket().write('two\n');
    await world.run(100);
    expect(received).toEqual([]);
    world.resume('b');
    await world.run(1);
    expect(received.map((r) => r.text)).toEqual(['one\n', 'two\n']);
  });

  it('refuses a connection nothing listens for', async () => {
    const world = new World({ seed: 1, latencyMs: [1, 1], bootDelayMs: [0, 0] });
    const seen: string[] = [];
    world.start('client', (p) => {
      const socket = p.io.net.connect({ host: 'nobody', port: 1 });
      socket.on('error', (e) => seen.push((e as Error & { code: string }).code));
      socket.on('close', () => seen.push('close'));
    });
    await world.run(100);
    expect(seen).toEqual(['ECONNREFUSED', 'close']);
  });
});
