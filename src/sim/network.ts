import type { Rng } from '../core/random.js';
import type { HostPort, Net, NetServer, NetSocket } from '../systems/kvraft/seams.js';
import { type HostedProcess, PHASE, type Scheduler } from './scheduler.js';

/**
 * How a cut behaves, after the two real backends: `proxy` (the userspace proxy on loopback: a
 * connection across a cut stays open and its bytes are dropped, and it is reset when the cut
 * heals; a new one is accepted and hangs the same way) or `netns` (iptables DROP in network
 * namespaces: bytes wait in the kernel and arrive on heal, unless a timeout reset the connection;
 * a connect waits for the heal, or for its own timeout).
 */
export type PartitionMode = 'proxy' | 'netns';

/** A degraded directed link (the packet fault family). */
export interface LinkParams {
  /** Added to every chunk's latency. */
  readonly delayMs?: number;
  /** Chance (%) a chunk is lost: the proxy resets the connection, TCP in a netns retransmits. */
  readonly lossPct?: number;
  /**
   * Chance (%) a packet is duplicated: TCP drops the copy by its sequence number, so no chunk
   * reaches a socket twice (neither through the proxy nor in a netns); kept so a schedule reads the same.
   */
  readonly dupPct?: number;
  /** Chunks on one connection may overtake each other (no real TCP does this: off by default). */
  readonly reorder?: boolean;
}

export interface NetworkOptions {
  readonly mode: PartitionMode;
  /** One-way latency of a chunk, uniform in [min, max] ms. */
  readonly latencyMs: readonly [number, number];
  /** Hosts that reach the others directly, never through a partitioned link (the clients). */
  readonly directHosts: ReadonlySet<string>;
  /** One-way latency to and from a direct host, uniform in [min, max] ms. */
  readonly directLatencyMs: readonly [number, number];
}

/** How long a lost chunk waits for TCP's retransmission in a netns. */
const RETRANSMIT_MS = 200;
/** Bytes the kernel takes from a socket before `writableLength` grows (loopback's send buffer). */
const SEND_BUFFER_BYTES = 256 * 1024;

const FIN = Symbol('fin');
type Chunk = string | typeof FIN;

interface Direction {
  held: Chunk[];
  heldBytes: number;
  lastDueMs: number;
}

interface Conn {
  readonly dialer: SimSocket;
  acceptor: SimSocket | undefined;
  readonly address: HostPort;
  readonly fromHost: string;
  readonly toHost: string;
  /** Through the proxy: node to node, in proxy mode. */
  readonly proxied: boolean;
  /** Proxy mode: cut while open; its bytes are dropped until the heal resets it. */
  poisoned: boolean;
  /** Netns mode: the SYN waits for a heal. */
  synHeld: boolean;
  readonly dirs: [Direction, Direction];
}

const linkKey = (from: string, to: string): string => `${from}>${to}`;

type Listener = (...args: never[]) => void;

/** One end of a simulated TCP connection. */
class SimSocket implements NetSocket {
  conn!: Conn;
  state: 'connecting' | 'open' | 'closed' = 'connecting';
  /** Written before the connection was up. */
  early: string[] = [];
  private readonly listeners = new Map<string, Listener[]>();
  private idleMs = 0;
  private idleCallback: (() => void) | undefined;
  private idleSeq = 0;

  constructor(
    readonly process: HostedProcess,
    readonly side: 0 | 1,
    private readonly network: SimNetwork,
  ) {}

  get writableLength(): number {
    if (this.state === 'connecting') return this.early.reduce((n, t) => n + t.length, 0);
    const dir = this.conn.dirs[this.side];
    return Math.max(0, dir.heldBytes - SEND_BUFFER_BYTES);
  }

  get writable(): boolean {
    return this.state !== 'closed';
  }

  write(text: string): boolean {
    if (this.state === 'closed') return false;
    this.touch();
    if (this.state === 'connecting') this.early.push(text);
    else this.network.transmit(this, text);
    return true;
  }

  destroy(): void {
    this.network.destroy(this);
  }

  setNoDelay(): void {
    // every write is one chunk
  }

  setKeepAlive(): void {
    // a connection across a cut lasts longer than any run (Linux's keepalive gives up after minutes)
  }

  setTimeout(timeoutMs: number, onTimeout?: () => void): void {
    this.idleMs = timeoutMs;
    if (onTimeout) this.idleCallback = onTimeout;
    this.touch();
  }

  setEncoding(): void {
    // text throughout
  }

  on(event: string, listener: Listener): void {
    const list = this.listeners.get(event);
    if (list) list.push(listener);
    else this.listeners.set(event, [listener]);
  }

  emit(event: string, ...args: unknown[]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (...a: unknown[]) => void)(...args);
  }

  /** Activity: the idle timeout starts again. */
  touch(): void {
    if (this.idleMs <= 0 || this.state === 'closed') return;
    const seq = ++this.idleSeq;
    this.network.scheduler.after(this.idleMs, PHASE.timers, this.process, () => {
      if (seq === this.idleSeq && this.state !== 'closed' && this.idleMs > 0) this.idleCallback?.();
    });
  }
}

class SimServer implements NetServer {
  listening = false;
  key: string | undefined;
  private readonly errorListeners: ((error: Error) => void)[] = [];
  private readonly onceListening: (() => void)[] = [];
  private readonly onceError: ((error: Error) => void)[] = [];

  constructor(
    readonly process: HostedProcess,
    readonly onConnection: (socket: NetSocket) => void,
    private readonly network: SimNetwork,
  ) {}

  listen(port: number, host: string): void {
    this.network.listen(this, `${host}:${port}`);
  }

  close(): void {
    this.network.unlisten(this);
  }

  on(_event: 'error', listener: (error: Error) => void): void {
    this.errorListeners.push(listener);
  }

  once(event: 'listening' | 'error', listener: never): void {
    if (event === 'listening') this.onceListening.push(listener);
    else this.onceError.push(listener);
  }

  listened(): void {
    this.listening = true;
    for (const l of this.onceListening.splice(0)) l();
  }

  failed(error: Error): void {
    this.onceError.splice(0).forEach((l) => {
      l(error);
    });
    for (const l of this.errorListeners) l(error);
  }
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(`${message} ${code}`), { code });
}

/**
 * Simulated TCP between the world's hosts: per connection, each direction is a FIFO with a random
 * latency per chunk; cuts, delays, losses and duplicates per directed link between hosts.
 */
export class SimNetwork {
  readonly scheduler: Scheduler;
  private readonly servers = new Map<string, SimServer>();
  private readonly conns = new Set<Conn>();
  private cuts = new Set<string>();
  private degraded = new Map<string, LinkParams>();

  constructor(
    world: { readonly scheduler: Scheduler },
    private readonly rng: Rng,
    private readonly options: NetworkOptions,
  ) {
    this.scheduler = world.scheduler;
  }

  /** The `Net` a process uses: its sockets and servers belong to it. */
  netFor(process: HostedProcess): Net {
    return {
      connect: (address) => this.connect(process, address),
      createServer: (onConnection) => new SimServer(process, onConnection, this),
    };
  }

  /** Cuts exactly these directed links (between hosts), healing every other. */
  cut(links: readonly (readonly [string, string])[]): void {
    this.cuts = new Set(links.map(([f, t]) => linkKey(f, t)));
    for (const conn of [...this.conns]) this.reconsider(conn);
  }

  heal(): void {
    this.cut([]);
    this.degraded = new Map();
  }

  /** Degrades exactly these directed links. */
  degrade(links: readonly (readonly [string, string])[], params: LinkParams): void {
    this.degraded = new Map(links.map(([f, t]) => [linkKey(f, t), params]));
  }

  isCut(from: string, to: string): boolean {
    return this.cuts.has(linkKey(from, to));
  }

  /** Closes every socket and server of a process that ended: its peers see the close a latency later. */
  processEnded(process: HostedProcess): void {
    for (const [key, server] of this.servers) if (server.process === process) this.servers.delete(key);
    for (const conn of [...this.conns]) {
      if (conn.dialer.process === process) this.destroy(conn.dialer);
      if (conn.acceptor?.process === process) this.destroy(conn.acceptor);
    }
  }

  listen(server: SimServer, key: string): void {
    const owner = server.process;
    if (this.servers.has(key)) {
      this.scheduler.after(0, PHASE.io, owner, () => {
        server.failed(codedError('EADDRINUSE', `listen EADDRINUSE: address already in use ${key}`));
      });
      return;
    }
    this.servers.set(key, server);
    server.key = key;
    this.scheduler.after(0, PHASE.io, owner, () => {
      server.listened();
    });
  }

  unlisten(server: SimServer): void {
    if (server.key !== undefined && this.servers.get(server.key) === server) this.servers.delete(server.key);
    server.listening = false;
  }

  private proxied(from: string, to: string): boolean {
    return (
      this.options.mode === 'proxy' &&
      !this.options.directHosts.has(from) &&
      !this.options.directHosts.has(to)
    );
  }

  private latency(from: string, to: string): number {
    const direct = this.options.directHosts.has(from) || this.options.directHosts.has(to);
    const [min, max] = direct ? this.options.directLatencyMs : this.options.latencyMs;
    return min + this.rng.next() * (max - min) + (this.degraded.get(linkKey(from, to))?.delayMs ?? 0);
  }

  private connect(process: HostedProcess, address: HostPort): SimSocket {
    const socket = new SimSocket(process, 0, this);
    const toHost = address.host;
    const conn: Conn = {
      dialer: socket,
      acceptor: undefined,
      address,
      fromHost: process.host,
      toHost,
      proxied: this.proxied(process.host, toHost),
      poisoned: false,
      synHeld: false,
      dirs: [
        { held: [], heldBytes: 0, lastDueMs: 0 },
        { held: [], heldBytes: 0, lastDueMs: 0 },
      ],
    };
    socket.conn = conn;
    this.conns.add(conn);
    if (conn.proxied) {
      // The proxy accepts at once and dials the node, or holds the connection across a cut.
      const atMs = this.scheduler.nowMs + this.latency(process.host, toHost);
      this.scheduler.at(atMs, PHASE.io, undefined, () => {
        if (this.isCut(conn.fromHost, toHost) || this.isCut(toHost, conn.fromHost)) conn.poisoned = true;
        else this.arrive(conn);
      });
      this.scheduler.at(atMs, PHASE.io, process, () => {
        this.established(conn);
      });
    } else this.sendSyn(conn);
    return socket;
  }

  private sendSyn(conn: Conn): void {
    const { fromHost, toHost } = conn;
    if (this.isCut(fromHost, toHost) || this.isCut(toHost, fromHost)) {
      conn.synHeld = true;
      return;
    }
    this.scheduler.after(this.latency(fromHost, toHost), PHASE.io, undefined, () => {
      if (conn.dialer.state === 'closed') return;
      if (!this.arrive(conn)) return;
      this.scheduler.after(this.latency(toHost, fromHost), PHASE.io, conn.dialer.process, () => {
        this.established(conn);
      });
    });
  }

  /** The connection reaches the listener; false (and the dialer is reset) when nothing listens. */
  private arrive(conn: Conn): boolean {
    const server = this.servers.get(`${conn.address.host}:${conn.address.port}`);
    if (!server?.process.alive) {
      this.scheduler.after(this.latency(conn.toHost, conn.fromHost), PHASE.io, conn.dialer.process, () => {
        if (conn.dialer.state === 'closed') return;
        if (!conn.proxied) {
          conn.dialer.emit(
            'error',
            codedError('ECONNREFUSED', `connect ECONNREFUSED ${conn.address.host}:${conn.address.port}`),
          );
        }
        this.closeEnd(conn.dialer);
      });
      return false;
    }
    const acceptor = new SimSocket(server.process, 1, this);
    acceptor.conn = conn;
    acceptor.state = 'open';
    conn.acceptor = acceptor;
    this.scheduler.after(0, PHASE.io, server.process, () => {
      server.onConnection(acceptor);
    });
    return true;
  }

  private established(conn: Conn): void {
    const socket = conn.dialer;
    if (socket.state !== 'connecting') return;
    socket.state = 'open';
    socket.emit('connect');
    const early = socket.early;
    socket.early = [];
    for (const text of early) this.transmit(socket, text);
    if (early.length > 0 && socket.writableLength === 0) socket.emit('drain');
  }

  transmit(from: SimSocket, text: string): void {
    const conn = from.conn;
    if (conn.poisoned) return;
    const fromHost = from.process.host;
    const toHost = from.side === 0 ? conn.toHost : conn.fromHost;
    const dir = conn.dirs[from.side];
    if (!conn.proxied && (this.isCut(fromHost, toHost) || dir.held.length > 0)) {
      dir.held.push(text);
      dir.heldBytes += text.length;
      return;
    }
    if (conn.proxied && (this.isCut(fromHost, toHost) || this.isCut(toHost, fromHost))) {
      conn.poisoned = true;
      return;
    }
    const params = this.degraded.get(linkKey(fromHost, toHost));
    let extraMs = 0;
    if (params?.lossPct !== undefined && this.rng.chance(params.lossPct / 100)) {
      if (conn.proxied) {
        this.reset(conn);
        return;
      }
      extraMs = RETRANSMIT_MS;
    }
    this.deliver(conn, from.side, text, extraMs, params?.reorder === true);
  }

  private deliver(conn: Conn, side: 0 | 1, chunk: Chunk, extraMs: number, reorder: boolean): void {
    const from = side === 0 ? conn.fromHost : conn.toHost;
    const to = side === 0 ? conn.toHost : conn.fromHost;
    const dir = conn.dirs[side];
    const due = this.scheduler.nowMs + this.latency(from, to) + extraMs;
    const at = reorder ? due : Math.max(due, dir.lastDueMs);
    if (!reorder) dir.lastDueMs = at;
    const receiver = side === 0 ? conn.acceptor : conn.dialer;
    if (!receiver) return;
    this.scheduler.at(at, PHASE.io, receiver.process, () => {
      if (receiver.state === 'closed') return;
      if (chunk === FIN) {
        this.closeEnd(receiver);
        return;
      }
      receiver.touch();
      receiver.emit('data', chunk);
    });
  }

  destroy(socket: SimSocket): void {
    if (socket.state === 'closed') return;
    const conn = socket.conn;
    const wasConnecting = socket.state === 'connecting';
    this.closeEnd(socket);
    if (wasConnecting && conn.acceptor === undefined) return;
    // The peer hears of it: through the proxy at once, in a netns after the held bytes (dropped:
    // a reset) once the link heals.
    const dir = conn.dirs[socket.side];
    dir.held = [];
    dir.heldBytes = 0;
    const peer = socket.side === 0 ? conn.acceptor : conn.dialer;
    if (!peer || peer.state === 'closed') return;
    const from = socket.process.host;
    const to = peer.process.host;
    if (!conn.proxied && this.isCut(from, to)) dir.held.push(FIN);
    else this.deliver(conn, socket.side, FIN, 0, false);
  }

  /** This end is closed: it emits 'close' in the close phase. */
  private closeEnd(socket: SimSocket): void {
    if (socket.state === 'closed') return;
    socket.state = 'closed';
    const conn = socket.conn;
    const other = socket.side === 0 ? conn.acceptor : conn.dialer;
    if (!other || other.state === 'closed') this.conns.delete(conn);
    this.scheduler.after(0, PHASE.close, socket.process, () => {
      socket.emit('close');
    });
  }

  /** Both ends are reset (the proxy destroys both of its sockets). */
  private reset(conn: Conn): void {
    for (const end of [conn.dialer, conn.acceptor]) {
      if (!end || end.state === 'closed') continue;
      const host = end.process.host;
      const proxyHost = end === conn.dialer ? conn.fromHost : conn.toHost;
      this.scheduler.after(this.latency(proxyHost, host), PHASE.io, end.process, () => {
        this.closeEnd(end);
      });
    }
  }

  /** After a change of the cuts: heal what is no longer cut. */
  private reconsider(conn: Conn): void {
    const { fromHost, toHost } = conn;
    const blocked = this.isCut(fromHost, toHost) || this.isCut(toHost, fromHost);
    if (conn.proxied) {
      if (blocked) conn.poisoned = conn.poisoned || conn.dialer.state !== 'closed';
      else if (conn.poisoned) {
        conn.poisoned = false;
        this.reset(conn);
      }
      return;
    }
    if (conn.synHeld && !blocked) {
      conn.synHeld = false;
      if (conn.dialer.state === 'connecting') this.sendSyn(conn);
    }
    for (const side of [0, 1] as const) {
      const dir = conn.dirs[side];
      const from = side === 0 ? fromHost : toHost;
      const to = side === 0 ? toHost : fromHost;
      if (dir.held.length === 0 || this.isCut(from, to)) continue;
      const held = dir.held;
      const writer = side === 0 ? conn.dialer : conn.acceptor;
      const wasBlocked = writer !== undefined && writer.writableLength > 0;
      dir.held = [];
      dir.heldBytes = 0;
      for (const chunk of held) this.deliver(conn, side, chunk, 0, false);
      if (wasBlocked && writer.state !== 'closed') writer.emit('drain');
    }
  }
}
