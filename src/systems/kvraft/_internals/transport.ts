import type { Probe } from '../../../probe/index.js';
import type { Outgoing, PeerMessage } from './messages.js';
import type { HostPort, Net, NetServer, NetSocket, NodeEnv, Timer } from '../seams.js';
import { parseObject, readLines } from './wire.js';

export type { HostPort } from '../seams.js';

const CONNECT_TIMEOUT_MS = 1000;
const BACKOFF_MIN_MS = 20;
const BACKOFF_MAX_MS = 200;
/** A connection whose send buffer has not drained for this long is considered dead. */
const STALL_MS = 2000;
/** Beyond this many unsent bytes, messages are dropped (Raft retries them). */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const KEEPALIVE_MS = 1000;

/**
 * One outgoing connection to one peer. Messages only ever flow from dialer to listener, so each
 * directed link of the fuzzer's network carries exactly one direction of traffic. The connection is
 * re-established with backoff whenever it breaks; a message sent while it is down is dropped.
 */
class Link {
  private socket: NetSocket | undefined;
  private connected = false;
  private backoffMs = BACKOFF_MIN_MS;
  private lastProgressMs: number;
  private timer: Timer | undefined;
  private closed = false;

  constructor(
    private readonly address: HostPort,
    private readonly net: Net,
    private readonly env: NodeEnv,
  ) {
    this.lastProgressMs = env.wallMs();
    this.connect();
  }

  /** Writes `line` if the link is up; `onSend` runs just before, so a send precedes its receive. */
  write(line: string, onSend: () => void): boolean {
    const socket = this.socket;
    if (!socket || !this.connected) return false;
    const now = this.env.wallMs();
    if (socket.writableLength === 0) this.lastProgressMs = now;
    else if (now - this.lastProgressMs > STALL_MS) {
      socket.destroy();
      return false;
    }
    if (socket.writableLength > MAX_BUFFERED_BYTES) return false;
    onSend();
    socket.write(line);
    return true;
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.socket?.destroy();
  }

  private connect(): void {
    if (this.closed) return;
    const socket = this.net.connect(this.address);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => {
      if (!this.connected) socket.destroy();
    });
    socket.on('connect', () => {
      this.connected = true;
      this.backoffMs = BACKOFF_MIN_MS;
      this.lastProgressMs = this.env.wallMs();
      socket.setTimeout(0);
      socket.setKeepAlive(true, KEEPALIVE_MS);
    });
    socket.on('drain', () => {
      this.lastProgressMs = this.env.wallMs();
    });
    socket.on('data', () => {
      // nothing is expected back on an outgoing link
    });
    socket.on('error', () => {
      // 'close' follows and schedules the reconnect
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.connected = false;
      this.socket = undefined;
      if (this.closed) return;
      this.timer = this.env.setTimeout(() => {
        this.connect();
      }, this.backoffMs);
      this.backoffMs = Math.min(BACKOFF_MAX_MS, this.backoffMs * 2);
    });
  }
}

/**
 * Peer messaging: line-delimited JSON over TCP. Every message carries its sender's node id and a
 * globally unique id (`<from>-<seq>`); sends and receives are reported as probe events so the
 * fuzzer sees exact happens-before edges.
 */
export class Transport {
  private readonly links = new Map<string, Link>();
  private readonly server: NetServer;
  private readonly inbound = new Set<NetSocket>();
  private seq = 0;

  constructor(
    private readonly self: string,
    private readonly peers: ReadonlyMap<string, HostPort>,
    listen: HostPort,
    private readonly probe: Probe,
    private readonly onMessage: (message: PeerMessage) => void,
    private readonly net: Net,
    private readonly env: NodeEnv,
  ) {
    this.server = net.createServer((socket) => {
      this.accept(socket);
    });
    this.server.listen(listen.port, listen.host);
    for (const [peer, address] of peers) {
      if (peer !== self) this.links.set(peer, new Link(address, this.net, this.env));
    }
  }

  /** Resolves once the listening socket is bound; rejects (e.g. port in use) otherwise. */
  listening(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.server.listening) {
        resolve();
        return;
      }
      this.server.once('listening', () => {
        resolve();
      });
      this.server.once('error', reject);
    });
  }

  send(to: string, body: Outgoing): void {
    const address = this.peers.get(to);
    if (!address || to === this.self) return;
    let link = this.links.get(to);
    if (!link) {
      link = new Link(address, this.net, this.env);
      this.links.set(to, link);
    }
    const msg = `${this.self}-${++this.seq}`;
    const message = { ...body, from: this.self, to, msg };
    link.write(JSON.stringify(message) + '\n', () => {
      this.probe.emit('send', { peer: to, msg, kind: body.kind });
    });
  }

  close(): void {
    for (const link of this.links.values()) link.close();
    for (const socket of this.inbound) socket.destroy();
    this.server.close();
  }

  private accept(socket: NetSocket): void {
    this.inbound.add(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.on('error', () => {
      // the dialer reconnects
    });
    socket.on('close', () => {
      this.inbound.delete(socket);
    });
    readLines(socket, (line) => {
      const raw = parseObject(line);
      if (!raw || raw.to !== this.self || typeof raw.from !== 'string') return;
      if (typeof raw.msg !== 'string' || typeof raw.kind !== 'string') return;
      if (typeof raw.term !== 'number') return;
      this.probe.emit('recv', { peer: raw.from, msg: raw.msg, kind: raw.kind });
      this.onMessage(raw as unknown as PeerMessage);
    });
  }
}
