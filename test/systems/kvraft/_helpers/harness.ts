import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import type { Address } from '../../../../src/cluster/net/backend.js';
import { sleep } from '../../../../src/core/clock.js';
import type { Event } from '../../../../src/core/event.js';
import type { NodeStatus } from '../../../../src/systems/kvraft/_internals/messages.js';
import { KvraftClient } from '../../../../src/systems/kvraft/client.js';
import { kvraft, nodeStatus } from '../../../../src/systems/kvraft/index.js';
import type { ClusterView, SystemAdapter } from '../../../../src/systems/system.js';

const HOST = '127.0.0.1';

/** Free loopback ports, found by binding port 0. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, HOST, () => {
            resolve(server);
          });
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/**
 * A test proxy for one directed peer link. Peer traffic is one JSON message per line and flows
 * only from dialer to listener, so the proxy can cut the link or drop messages of chosen kinds.
 */
class LinkProxy {
  cut = false;
  dropKinds = new Set<string>();
  /** Each message is held this long before it is passed on (order kept). */
  delayMs = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;

  constructor(
    readonly port: number,
    private readonly target: number,
  ) {
    this.server = net.createServer((socket) => {
      this.accept(socket);
    });
    this.server.listen(port, HOST);
  }

  setCut(cut: boolean): void {
    this.cut = cut;
    if (cut) for (const s of this.sockets) s.destroy();
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
  }

  private accept(socket: net.Socket): void {
    if (this.cut) {
      socket.destroy();
      return;
    }
    const upstream = net.connect({ host: HOST, port: this.target });
    this.sockets.add(socket);
    this.sockets.add(upstream);
    const end = (): void => {
      socket.destroy();
      upstream.destroy();
      this.sockets.delete(socket);
      this.sockets.delete(upstream);
    };
    socket.on('error', end);
    upstream.on('error', end);
    socket.on('close', end);
    upstream.on('close', end);
    let pending = '';
    let lastDue = 0;
    const forward = (line: string): void => {
      if (this.delayMs <= 0 && lastDue <= Date.now()) {
        upstream.write(line);
        return;
      }
      const due = Math.max(Date.now() + this.delayMs, lastDue);
      lastDue = due;
      setTimeout(() => {
        if (!upstream.destroyed) upstream.write(line);
      }, due - Date.now());
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      pending += chunk;
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = pending.slice(0, nl + 1);
        pending = pending.slice(nl + 1);
        nl = pending.indexOf('\n');
        if (this.cut) continue;
        const kind = /"kind":"([a-z-]+)"/.exec(line)?.[1] ?? '';
        if (!this.dropKinds.has(kind)) forward(line);
      }
    });
  }
}

export interface StartOptions {
  readonly join?: boolean;
  readonly bugs?: readonly string[];
  readonly snapshotEvery?: number;
  readonly electionMs?: readonly [number, number];
}

interface Running {
  readonly child: ChildProcess;
  readonly pid: number;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

/**
 * Real kvraft node processes on loopback, started through the adapter's `launch()`, with one test
 * proxy per directed peer link. Processes are started detached, recorded by PID and killed by PID.
 */
export class Harness {
  readonly dir: string;
  readonly members: string[];
  private readonly running = new Map<string, Running>();
  private readonly proxies = new Map<string, LinkProxy>();
  private readonly adapter: SystemAdapter;
  readonly view: ClusterView;

  private constructor(
    readonly nodes: readonly string[],
    ports: ReadonlyMap<string, { client: number; peer: number }>,
    proxyPorts: readonly number[],
    bugs: readonly string[],
  ) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'kvraft-test-'));
    this.members = [...nodes];
    this.adapter = kvraft.create({ bugs });
    let i = 0;
    for (const from of nodes) {
      for (const to of nodes) {
        if (from === to) continue;
        const proxy = new LinkProxy(proxyPorts[i++], ports.get(to)!.peer);
        this.proxies.set(`${from}>${to}`, proxy);
      }
    }
    const address = (port: number): Address => ({ host: HOST, port });
    const members = this.members;
    const dir = this.dir;
    this.view = {
      nodes,
      get members() {
        return members;
      },
      dataDir: (node) => path.join(dir, node, 'data'),
      listen: (node, service) =>
        address(service === 'client' ? ports.get(node)!.client : ports.get(node)!.peer),
      dial: (from, to) => address(this.proxies.get(`${from}>${to}`)!.port),
      clientAddress: (node) => address(ports.get(node)!.client),
      runDir: dir,
    };
  }

  static async create(count: number, bugs: readonly string[] = []): Promise<Harness> {
    const nodes = Array.from({ length: count }, (_, i) => `n${i + 1}`);
    const proxyCount = count * (count - 1);
    const all = await freePorts(count * 2 + proxyCount);
    const ports = new Map(nodes.map((n, i) => [n, { client: all[2 * i], peer: all[2 * i + 1] }]));
    return new Harness(nodes, ports, all.slice(count * 2), bugs);
  }

  start(node: string, options: StartOptions = {}): void {
    if (this.running.has(node)) throw new Error(`${node} is already running`);
    const adapter = options.bugs ? kvraft.create({ bugs: options.bugs }) : this.adapter;
    const spec = adapter.launch(node, this.view, { join: options.join ?? false });
    const extra = [
      ...(options.snapshotEvery !== undefined ? ['--snapshot-every', `${options.snapshotEvery}`] : []),
      ...(options.electionMs ? ['--election-ms', options.electionMs.join('-')] : []),
    ];
    mkdirSync(path.join(this.dir, node), { recursive: true });
    const out = openSync(this.outputPath(node), 'a');
    const child = spawn(spec.command, [...spec.args, ...extra], {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, ...spec.env },
    });
    closeSync(out);
    if (child.pid === undefined) throw new Error(`could not start ${node}`);
    const entry: Running = { child, pid: child.pid };
    child.on('exit', (code, signal) => {
      entry.exit = { code, signal };
    });
    this.running.set(node, entry);
  }

  startAll(options: StartOptions = {}, perNode: Record<string, StartOptions> = {}): void {
    for (const node of this.nodes) this.start(node, { ...options, ...perNode[node] });
  }

  /** SIGKILLs the node and waits until it is gone. */
  async kill(node: string): Promise<void> {
    const entry = this.running.get(node);
    if (!entry) return;
    this.running.delete(node);
    if (entry.exit) return;
    const exited = new Promise((resolve) => entry.child.once('exit', resolve));
    process.kill(entry.pid, 'SIGKILL');
    await exited;
  }

  pause(node: string): void {
    process.kill(this.pid(node), 'SIGSTOP');
  }

  resume(node: string): void {
    process.kill(this.pid(node), 'SIGCONT');
  }

  wipe(node: string): void {
    rmSync(this.view.dataDir(node), { recursive: true, force: true });
  }

  /** How the node's process ended, if it has. */
  exitOf(node: string): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.running.get(node)?.exit;
  }

  /** Cuts (or heals) both directions between `a` and each node in `others`. */
  isolate(a: string, others: readonly string[] = this.nodes, cut = true): void {
    for (const b of others) {
      if (a === b) continue;
      this.link(a, b).setCut(cut);
      this.link(b, a).setCut(cut);
    }
  }

  link(from: string, to: string): LinkProxy {
    return this.proxies.get(`${from}>${to}`)!;
  }

  /** Delays every peer message by `ms` (0: no delay). */
  delay(ms: number): void {
    for (const proxy of this.proxies.values()) proxy.delayMs = ms;
  }

  heal(): void {
    for (const proxy of this.proxies.values()) {
      proxy.setCut(false);
      proxy.dropKinds.clear();
      proxy.delayMs = 0;
    }
  }

  status(node: string, timeoutMs = 500): Promise<NodeStatus | undefined> {
    return nodeStatus(node, this.view, timeoutMs);
  }

  client(node: string, timeoutMs = 2000): KvraftClient {
    const addresses = new Map(this.nodes.map((n) => [n, this.view.clientAddress(n, 'client')]));
    return new KvraftClient(node, addresses, timeoutMs);
  }

  /** Waits until one of `among` is leader (in a term above `aboveTerm`) and returns its status. */
  async waitLeader(
    among: readonly string[] = this.nodes,
    timeoutMs = 5000,
    aboveTerm = 0,
  ): Promise<NodeStatus> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const statuses = await Promise.all(among.map((n) => this.status(n, 300)));
      const leader = statuses.find((s) => s?.role === 'leader' && s.term > aboveTerm);
      if (leader) return leader;
      await sleep(50);
    }
    throw new Error(`no leader among ${among.join(',')} within ${timeoutMs} ms`);
  }

  async waitFor<T>(
    what: string,
    probe: () => Promise<T | undefined> | T | undefined,
    timeoutMs = 5000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(25);
    }
  }

  /** The node's probe events so far (all incarnations). */
  events(node: string): Event[] {
    const file = path.join(this.dir, 'nodes', node, 'probe.jsonl');
    if (!existsSync(file)) return [];
    const events: Event[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const raw = JSON.parse(line) as { ts: number; type: string; attrs?: Event['attrs'] };
        events.push({
          ts: raw.ts,
          node,
          source: 'probe',
          type: raw.type,
          ...(raw.attrs ? { attrs: raw.attrs } : {}),
        });
      } catch {
        // a line being written
      }
    }
    return events;
  }

  allEvents(): Event[] {
    return this.nodes.flatMap((n) => this.events(n)).sort((a, b) => a.ts - b.ts);
  }

  output(node: string): string {
    const file = this.outputPath(node);
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  async cleanup(): Promise<void> {
    const exits: Promise<unknown>[] = [];
    for (const [node, entry] of this.running) {
      if (!entry.exit) {
        exits.push(Promise.race([new Promise((resolve) => entry.child.once('exit', resolve)), sleep(2000)]));
        try {
          process.kill(entry.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      this.running.delete(node);
    }
    await Promise.all(exits);
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private pid(node: string): number {
    const entry = this.running.get(node);
    if (!entry) throw new Error(`${node} is not running`);
    return entry.pid;
  }

  private outputPath(node: string): string {
    return path.join(this.dir, node, 'output.log');
  }
}
