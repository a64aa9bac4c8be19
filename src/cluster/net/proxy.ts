import { connect, createServer, type Server, type Socket } from 'node:net';

import { monoNs } from '../../core/clock.js';
import type { Event } from '../../core/event.js';
import type { PacketParams } from '../../core/fault.js';
import { Rng } from '../../core/random.js';
import type { Address, Link, NetworkBackend } from './backend.js';
import { freePorts } from './ports.js';

const LOOPBACK = '127.0.0.1';

interface Conn {
  readonly from: string;
  readonly to: string;
  readonly a: Socket;
  b: Socket | undefined;
  /** Data was dropped: the byte stream is broken, so the connection is reset on heal. */
  poisoned: boolean;
}

interface LinkProxy {
  readonly from: string;
  readonly to: string;
  readonly service: string;
  readonly server: Server;
  readonly port: number;
  readonly conns: Set<Conn>;
  seq: number;
}

export interface ProxyBackendOptions {
  readonly nodes: readonly string[];
  readonly services: readonly string[];
  readonly peerServices: readonly string[];
  readonly seed: number;
  /**
   * Ports to take where they are free, by `addresses()`'s keys: the ones a checkpoint's data dirs
   * name (a node that stores its peers' addresses restarts on them).
   */
  readonly pinned?: Readonly<Record<string, number>>;
}

const linkKey = (from: string, to: string): string => `${from}>${to}`;
const proxyKey = (from: string, to: string, service: string): string => `${linkKey(from, to)}/${service}`;

/**
 * The no-root network backend: every directed link between two nodes is a userspace TCP proxy on
 * loopback. A cut link blackholes its traffic (like iptables DROP); a degraded link delays chunks
 * (in order) or loses them (the connection is reset); duplication is TCP's to hide, so the stream
 * never sees it. Each chunk becomes a `send` event at the sender and a `recv` event at the
 * receiver with the same message id. Clients reach nodes directly.
 */
export class ProxyBackend implements NetworkBackend {
  readonly kind = 'proxy';
  private readonly ports = new Map<string, number>();
  private readonly proxies = new Map<string, LinkProxy>();
  private readonly listeners: ((event: Event) => void)[] = [];
  private cuts = new Set<string>();
  private degraded = new Map<string, PacketParams>();
  private readonly rng: Rng;
  /** Keys of `pinned` whose port was taken by something else: those addresses changed. */
  readonly unpinned: string[] = [];

  private constructor(seed: number) {
    this.rng = new Rng(seed).fork('proxy');
  }

  static async create(options: ProxyBackendOptions): Promise<ProxyBackend> {
    const backend = new ProxyBackend(options.seed);
    const pinned = options.pinned ?? {};
    const keys = options.nodes.flatMap((node) => options.services.map((service) => `${node}/${service}`));
    const ports = await freePorts(
      keys.length,
      LOOPBACK,
      keys.map((k) => pinned[k]),
    );
    keys.forEach((key, i) => backend.ports.set(key, ports[i] ?? 0));
    for (const service of options.peerServices) {
      for (const from of options.nodes) {
        for (const to of options.nodes) {
          if (from !== to) await backend.startProxy(from, to, service, pinned[proxyKey(from, to, service)]);
        }
      }
    }
    for (const [key, port] of Object.entries(backend.addresses())) {
      const want = pinned[key];
      if (want !== undefined && want !== port) backend.unpinned.push(key);
    }
    return backend;
  }

  /**
   * Every port of the run: each node's service (`n1/client`) and each link's proxy
   * (`n1>n2/peer`); what a checkpoint records, so that a run started from it can take them again.
   */
  addresses(): Record<string, number> {
    const all: Record<string, number> = Object.fromEntries(this.ports);
    for (const [key, proxy] of this.proxies) all[key] = proxy.port;
    return all;
  }

  listen(node: string, service: string): Address {
    const port = this.ports.get(`${node}/${service}`);
    if (port === undefined) throw new Error(`no port for ${node}/${service}`);
    return { host: LOOPBACK, port };
  }

  dial(from: string, to: string, service: string): Address {
    const proxy = this.proxies.get(proxyKey(from, to, service));
    return proxy ? { host: LOOPBACK, port: proxy.port } : this.listen(to, service);
  }

  clientAddress(node: string, service: string): Address {
    return this.listen(node, service);
  }

  commandPrefix(): readonly string[] {
    return [];
  }

  onEvent(listener: (event: Event) => void): void {
    this.listeners.push(listener);
  }

  cut(links: readonly Link[]): Promise<void> {
    this.cuts = new Set(links.map(([f, t]) => linkKey(f, t)));
    for (const proxy of this.proxies.values()) {
      for (const conn of proxy.conns) {
        if (this.isCut(conn.from, conn.to)) conn.poisoned = true;
        else if (conn.poisoned) this.reset(proxy, conn);
      }
    }
    return Promise.resolve();
  }

  degrade(links: readonly Link[], params: PacketParams): Promise<void> {
    this.degraded = new Map(links.map(([f, t]) => [linkKey(f, t), params]));
    return Promise.resolve();
  }

  async heal(): Promise<void> {
    await this.cut([]);
    await this.degrade([], { target: 'all' });
  }

  async close(): Promise<void> {
    for (const proxy of this.proxies.values()) {
      for (const conn of proxy.conns) this.reset(proxy, conn);
    }
    await Promise.all(
      [...this.proxies.values()].map(
        (p) =>
          new Promise<void>((resolve) =>
            p.server.close(() => {
              resolve();
            }),
          ),
      ),
    );
    this.proxies.clear();
  }

  /** A connection through link from→to is blocked when either direction is cut (TCP needs both). */
  private isCut(from: string, to: string): boolean {
    return this.cuts.has(linkKey(from, to)) || this.cuts.has(linkKey(to, from));
  }

  private emit(event: Event): void {
    for (const listener of this.listeners) listener(event);
  }

  private reset(proxy: LinkProxy, conn: Conn): void {
    conn.a.destroy();
    conn.b?.destroy();
    proxy.conns.delete(conn);
  }

  private async startProxy(from: string, to: string, service: string, pinnedPort?: number): Promise<void> {
    const conns = new Set<Conn>();
    const server = createServer({ noDelay: true }, (socket) => {
      this.accept(proxy, socket);
    });
    const listen = (port: number): Promise<boolean> =>
      new Promise<boolean>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) => {
          if (port !== 0 && error.code === 'EADDRINUSE') resolve(false);
          else reject(error);
        });
        server.listen({ port, host: LOOPBACK, exclusive: true }, () => {
          resolve(true);
        });
      });
    if (pinnedPort === undefined || !(await listen(pinnedPort))) await listen(0);
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    const proxy: LinkProxy = { from, to, service, server, port: address.port, conns, seq: 0 };
    this.proxies.set(proxyKey(from, to, service), proxy);
  }

  private accept(proxy: LinkProxy, a: Socket): void {
    const conn: Conn = { from: proxy.from, to: proxy.to, a, b: undefined, poisoned: false };
    proxy.conns.add(conn);
    a.on('error', () => {
      this.reset(proxy, conn);
    });
    a.on('close', () => {
      this.reset(proxy, conn);
    });
    if (this.isCut(proxy.from, proxy.to)) {
      // Blackholed: the connection hangs until the partition heals, then is reset.
      conn.poisoned = true;
      a.resume();
      return;
    }
    const target = this.listen(proxy.to, proxy.service);
    const b = connect({ host: target.host, port: target.port, noDelay: true });
    conn.b = b;
    b.on('error', () => {
      this.reset(proxy, conn);
    });
    b.on('close', () => {
      this.reset(proxy, conn);
    });
    this.pipe(proxy, conn, a, b, proxy.from, proxy.to);
    this.pipe(proxy, conn, b, a, proxy.to, proxy.from);
  }

  private pipe(proxy: LinkProxy, conn: Conn, src: Socket, dst: Socket, from: string, to: string): void {
    // Delayed chunks wait in one queue per direction, drained in order by one timer: a chunk is
    // never written before one read before it, even when the delay shrinks or a timer is late.
    const queue: { readonly due: number; readonly deliver: () => void }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const drain = (): void => {
      timer = undefined;
      while (queue.length > 0 && queue[0].due <= Date.now()) queue.shift()!.deliver();
      if (queue.length > 0) timer = setTimeout(drain, Math.max(0, queue[0].due - Date.now()));
    };
    src.on('data', (chunk: Buffer) => {
      const msg = `${proxy.from}>${proxy.to}/${proxy.service}#${proxy.seq++}`;
      this.emit({
        ts: monoNs(),
        node: from,
        source: 'net',
        type: 'send',
        attrs: { peer: to, msg, bytes: chunk.length },
      });
      if (conn.poisoned || this.isCut(from, to)) {
        conn.poisoned = true;
        return;
      }
      const params = this.degraded.get(linkKey(from, to));
      if (params?.lossPct !== undefined && this.rng.chance(params.lossPct / 100)) {
        // A lost chunk breaks the byte stream: the connection is reset, as TCP would give up.
        this.reset(proxy, conn);
        return;
      }
      // A duplicated packet never reaches the application through TCP (the receiver drops it by
      // its sequence number), so a stream proxy writes each chunk once: writing it twice would
      // corrupt the byte stream, a fault no network makes (a dqlite client, for one, panics).
      const deliver = (): void => {
        if (dst.destroyed) return;
        dst.write(chunk);
        this.emit({
          ts: monoNs(),
          node: to,
          source: 'net',
          type: 'recv',
          attrs: { peer: from, msg, bytes: chunk.length },
        });
      };
      const delayMs = params?.delayMs ?? 0;
      if (delayMs <= 0 && queue.length === 0) {
        deliver();
        return;
      }
      const due = Math.max(Date.now() + delayMs, queue.at(-1)?.due ?? 0);
      queue.push({ due, deliver });
      timer ??= setTimeout(drain, Math.max(0, due - Date.now()));
    });
  }
}
