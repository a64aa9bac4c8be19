import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';

import { monoNs, NS_PER_MS } from '../../core/clock.js';
import type { PacketParams } from '../../core/fault.js';
import { processStartTime, type ResourceRegistry } from '../resources.js';
import { localRuntime } from '../runtime/local.js';
import type { Address, CaptureTap, Link, NetworkBackend } from './backend.js';
import { DELAY_PROXY_GID, DELAY_PROXY_SCRIPT, type DelayProxyConfig } from './_internals/delay-proxy.js';
import { mustRun, run } from '../../core/exec.js';
import { FixedPorts } from './_internals/fixed-ports.js';
import { netemDstFilterArgs } from './_internals/netem-filter.js';
import { RulesLoader } from './_internals/rules-loader.js';
import { chooseSubnet, prefixesIn, type Subnet24 } from './_internals/subnet.js';

export interface NetnsOptions {
  /** The run's id: names and the subnet derive from it. */
  readonly runId: string;
  readonly nodes: readonly string[];
  /** Service name → the TCP port every node listens on for it. */
  readonly services: Readonly<Record<string, number>>;
  /** Services nodes use between each other (the delay proxy covers these); default: all. */
  readonly peerServices?: readonly string[];
  readonly registry: ResourceRegistry;
  /**
   * The /24 to take when it is free (`10.a.b.0/24`): a run started from a checkpoint takes the
   * subnet of the run that took it, as its data dirs may name the nodes' addresses. Otherwise, or
   * when it is taken, one chosen from the run id.
   */
  readonly subnet?: string;
}

export type Availability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Name prefix of everything a run creates, so leftovers are easy to spot (`ip netns list`). */
export const NAMESPACE_PREFIX = 'mallory-';
/** The root namespace's end of the veth into the hub: `mlr` + 6 hex (fits IFNAMSIZ). */
export const ROOT_VETH_PREFIX = 'mlr';
const BRIDGE = 'br0';
const NODE_IFACE = 'eth0';
const ROOT_HOST_OCTET = 254;
/** Metric of the guard route: above the veth's connected route (metric 0), so it only acts without it. */
const GUARD_METRIC = 4242;
/** Delay-proxy listen ports inside a sender's namespace: below the ephemeral range (32768+). */
const DELAY_PORT_BASE = 31_000;
const PROXY_READY_TIMEOUT_MS = 5_000;
const PERCENT = 100;

/** A node's slot in the subnet: node i (0-based) is `.i+1`. */
function hostOctet(index: number): number {
  return index + 1;
}

/** The hash of a run id that names its namespaces (`mallory-<hash>-…`) and its root veth. */
export function shortId(runId: string): string {
  return createHash('sha256').update(runId).digest('hex').slice(0, 6);
}

function safeName(node: string): string {
  return node.replace(/[^A-Za-z0-9_-]/g, '_');
}

interface Proxy {
  readonly pid: number;
  readonly resourceId: number;
}

/**
 * How long the backend remembers that it reset a node's connections: longer than a schedule and
 * its checks, after which the exits it could explain have been judged.
 */
const CUTS_KEPT_MS = 10 * 60_000;

/**
 * Every node in its own network namespace, on a bridge in a hub namespace; the fuzzer (root
 * namespace) reaches the nodes through its own veth into the bridge. The run's /24 exists only on
 * those veths; an `unreachable` guard route (higher metric) keeps it from ever leaving the machine
 * by the default route, even while the veth is being created or removed.
 *
 * Cuts and loss are iptables rules in the receiving node's namespace (by source address, so the
 * fuzzer's client traffic from the root veth is never affected); duplication is iptables TEE in the
 * sender's namespace; delay is netem where the kernel has it, else a userspace delay proxy in the
 * sender's namespace that iptables REDIRECTs the link's connections to (existing connections are
 * cut with `ss -K` so the redirect takes effect, and a stopped proxy ends the ones it relayed:
 * `connectionCuts` says when). Rules live only inside the run's namespaces and go
 * with them; the namespaces, the root veth and the guard route are recorded in the registry before they are
 * created (a crash in between leaves nothing unrecorded), every process as soon as it has a PID.
 */
export class NetnsBackend implements NetworkBackend {
  readonly kind = 'netns' as const;
  readonly subnet: string;
  readonly hubNamespace: string;
  /** The fuzzer's own address on the bridge. */
  readonly clientHost: string;
  private readonly nodeIps = new Map<string, string>();
  private readonly ipNodes = new Map<string, string>();
  private readonly namespaces = new Map<string, string>();
  private readonly resourceIds: number[] = [];
  private readonly appliedRules = new Map<string, string>();
  /** Each namespace's long-lived rule loader, started at its first rule change. */
  private readonly loaders = new Map<string, RulesLoader>();
  private readonly proxies = new Map<string, Proxy>();
  private readonly netemNodes = new Set<string>();
  /** The links the running delay proxies carry: stopping them resets those connections. */
  private proxiedLinks: readonly Link[] = [];
  /** Per node, when this backend reset its connections (monotonic ns), the last `CUTS_KEPT_MS`. */
  private readonly resetsAt = new Map<string, number[]>();
  private readonly ports: FixedPorts;
  private cuts: readonly Link[] = [];
  private degraded: { readonly links: readonly Link[]; readonly params: PacketParams } | undefined;
  private closed = false;

  private constructor(
    private readonly options: NetnsOptions,
    prefix: string,
    /** The root namespace's end of the veth into the hub (`mlr` + 6 hex). */
    readonly rootVeth: string,
    private readonly net: Subnet24,
    private readonly netem: boolean,
  ) {
    this.subnet = net.cidr;
    this.hubNamespace = `${prefix}hub`;
    this.clientHost = `${net.base}.${ROOT_HOST_OCTET}`;
    this.ports = new FixedPorts(options.services, (node) => this.nodeIp(node));
    options.nodes.forEach((node, i) => {
      const ip = `${net.base}.${hostOctet(i)}`;
      this.nodeIps.set(node, ip);
      this.ipNodes.set(ip, node);
      this.namespaces.set(node, `${prefix}${safeName(node)}`);
    });
  }

  /** Whether this process can build namespaces, and why not. */
  static async available(): Promise<Availability> {
    if (process.getuid?.() !== 0) {
      return {
        ok: false,
        reason: 'network namespaces need root (CAP_NET_ADMIN): run as root or use the proxy backend',
      };
    }
    for (const [tool, pkg] of [
      ['ip', 'iproute2'],
      ['iptables', 'iptables'],
    ] as const) {
      const result = await run([tool, '-V']);
      if (result.code !== 0)
        return { ok: false, reason: `\`${tool}\` is missing: apt-get install -y ${pkg}` };
    }
    return { ok: true };
  }

  /** Whether this kernel has the netem qdisc (tried in a throwaway namespace). */
  static async netemAvailable(
    probeName = `${NAMESPACE_PREFIX}netem-probe-${process.pid}`,
    registry?: ResourceRegistry,
  ): Promise<boolean> {
    const id = registry?.record({ kind: 'netns', name: probeName });
    try {
      if ((await run(['ip', 'netns', 'add', probeName])).code !== 0) return false;
      await run(['ip', '-n', probeName, 'link', 'set', 'lo', 'up']);
      const result = await run([
        'ip',
        'netns',
        'exec',
        probeName,
        'tc',
        'qdisc',
        'add',
        'dev',
        'lo',
        'root',
        'netem',
        'delay',
        '1ms',
      ]);
      return result.code === 0;
    } finally {
      if (id !== undefined) registry?.release(id);
      else await run(['ip', 'netns', 'delete', probeName]);
    }
  }

  static async create(options: NetnsOptions): Promise<NetnsBackend> {
    const availability = await NetnsBackend.available();
    if (!availability.ok) throw new Error(availability.reason);
    if (options.nodes.length === 0 || options.nodes.length >= ROOT_HOST_OCTET - 1) {
      throw new Error(`NetnsBackend needs 1–${ROOT_HOST_OCTET - 2} nodes, got ${options.nodes.length}`);
    }
    const short = shortId(options.runId);
    const prefix = `${NAMESPACE_PREFIX}${short}-`;
    const existing = (await mustRun(['ip', 'netns', 'list'])).split('\n');
    if (existing.some((line) => line.startsWith(prefix))) {
      throw new Error(
        `namespaces ${prefix}* already exist: another run with this id, or run \`mallory cleanup\``,
      );
    }
    const routes = await mustRun(['ip', '-4', 'route', 'show', 'table', 'all']);
    const addresses = await mustRun(['ip', '-4', '-o', 'addr', 'show']);
    const net = chooseSubnet(options.runId, prefixesIn(routes + '\n' + addresses), options.subnet);
    const netem = await NetnsBackend.netemAvailable(`${prefix}netem-probe`, options.registry);
    const backend = new NetnsBackend(options, prefix, `${ROOT_VETH_PREFIX}${short}`, net, netem);
    try {
      await backend.build();
    } catch (error) {
      await backend.close();
      throw error;
    }
    return backend;
  }

  private record(resource: Parameters<ResourceRegistry['record']>[0]): number {
    const id = this.options.registry.record(resource);
    this.resourceIds.push(id);
    return id;
  }

  private async build(): Promise<void> {
    const cidr = this.net.cidr;
    this.record({
      kind: 'command',
      undo: ['ip', 'route', 'del', 'unreachable', cidr, 'metric', String(GUARD_METRIC)],
      label: `guard route for ${cidr}`,
    });
    await mustRun(['ip', 'route', 'add', 'unreachable', cidr, 'metric', String(GUARD_METRIC)]);
    const hub = this.hubNamespace;
    await this.addNamespace(hub);
    await mustRun(['ip', '-n', hub, 'link', 'add', BRIDGE, 'type', 'bridge']);
    await mustRun(['ip', '-n', hub, 'link', 'set', BRIDGE, 'up']);
    let index = 0;
    for (const node of this.options.nodes) {
      const ns = this.namespace(node);
      const hubEnd = `v${index++}`;
      await this.addNamespace(ns);
      await mustRun([
        'ip',
        '-n',
        hub,
        'link',
        'add',
        hubEnd,
        'type',
        'veth',
        'peer',
        'name',
        NODE_IFACE,
        'netns',
        ns,
      ]);
      await mustRun(['ip', '-n', hub, 'link', 'set', hubEnd, 'master', BRIDGE, 'up']);
      await mustRun(['ip', '-n', ns, 'addr', 'add', `${this.nodeIp(node)}/24`, 'dev', NODE_IFACE]);
      await mustRun(['ip', '-n', ns, 'link', 'set', NODE_IFACE, 'up']);
    }
    this.record({
      kind: 'command',
      undo: ['ip', 'link', 'del', this.rootVeth],
      label: `root veth ${this.rootVeth}`,
    });
    await mustRun(['ip', 'link', 'add', this.rootVeth, 'type', 'veth', 'peer', 'name', 'root', 'netns', hub]);
    await mustRun(['ip', '-n', hub, 'link', 'set', 'root', 'master', BRIDGE, 'up']);
    await mustRun(['ip', 'addr', 'add', `${this.clientHost}/24`, 'dev', this.rootVeth]);
    await mustRun(['ip', 'link', 'set', this.rootVeth, 'up']);
  }

  private async addNamespace(name: string): Promise<void> {
    this.record({ kind: 'netns', name });
    await mustRun(['ip', 'netns', 'add', name]);
    await mustRun(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
  }

  /** The namespace a node runs in. */
  namespace(node: string): string {
    const ns = this.namespaces.get(node);
    if (ns === undefined) throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return ns;
  }

  /** A node's address on the bridge. */
  nodeIp(node: string): string {
    const ip = this.nodeIps.get(node);
    if (ip === undefined) throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return ip;
  }

  private port(service: string): number {
    return this.ports.port(service);
  }

  listen(node: string, service: string): Address {
    return this.ports.at(node, service);
  }

  dial(_from: string, to: string, service: string): Address {
    return this.ports.at(to, service);
  }

  clientAddress(node: string, service: string): Address {
    return this.ports.at(node, service);
  }

  commandPrefix(node: string): readonly string[] {
    return ['ip', 'netns', 'exec', this.namespace(node)];
  }

  /** The hub's bridge sees every packet between nodes; the fuzzer's clients come from `clientHost`. */
  captureTap(): CaptureTap {
    return {
      runtime: localRuntime(),
      prefix: ['ip', 'netns', 'exec', this.hubNamespace],
      iface: BRIDGE,
      exclude: [this.clientHost],
      nodeAt: (ip) => this.ipNodes.get(ip),
    };
  }

  async cut(links: readonly Link[]): Promise<void> {
    this.cuts = this.checkLinks(links);
    await this.applyRules();
  }

  async degrade(links: readonly Link[], params: PacketParams): Promise<void> {
    const checked = this.checkLinks(links);
    for (const [name, pct] of [
      ['lossPct', params.lossPct],
      ['dupPct', params.dupPct],
    ] as const) {
      if (pct !== undefined && (pct < 0 || pct > PERCENT))
        throw new Error(`${name} must be 0–100, got ${pct}`);
    }
    if (params.delayMs !== undefined && params.delayMs < 0)
      throw new Error(`delayMs must be ≥ 0, got ${params.delayMs}`);
    await this.stopDelay();
    this.degraded = { links: checked, params };
    const delayMs = params.delayMs ?? 0;
    if (delayMs > 0 && this.netem) await this.startNetemDelay(checked, delayMs);
    else if (delayMs > 0) await this.startDelayProxies(checked, delayMs);
    await this.applyRules();
    if (delayMs > 0 && !this.netem) await this.killRedirectedConnections(checked);
  }

  async heal(): Promise<void> {
    this.cuts = [];
    this.degraded = undefined;
    await this.applyRules();
    await this.stopDelay();
  }

  connectionCuts(node: string): readonly number[] {
    return this.resetsAt.get(node) ?? [];
  }

  /** Notes that the connections of both ends of `links` are being reset now. */
  private noteCuts(links: readonly Link[]): void {
    const now = monoNs();
    const since = now - CUTS_KEPT_MS * NS_PER_MS;
    for (const node of new Set(links.flat())) {
      this.resetsAt.set(node, [...(this.resetsAt.get(node) ?? []).filter((t) => t >= since), now]);
    }
  }

  private checkLinks(links: readonly Link[]): readonly Link[] {
    for (const [from, to] of links) {
      this.nodeIp(from);
      this.nodeIp(to);
    }
    return links;
  }

  /** The iptables tables for one node's namespace, for these cuts and this degradation. */
  private rulesFor(node: string, cuts: readonly Link[], d: NetnsBackend['degraded']): string {
    const filter: string[] = [];
    const mangle: string[] = [];
    const nat: string[] = [];
    for (const [from, to] of cuts) {
      if (to === node) filter.push(`-A INPUT -s ${this.nodeIp(from)}/32 -j DROP`);
    }
    if (d) {
      const delayMs = d.params.delayMs ?? 0;
      const delayed = d.links.filter(([from]) => from === node);
      for (const [from, to] of d.links) {
        const loss = (d.params.lossPct ?? 0) / PERCENT;
        if (to === node && loss > 0) {
          filter.push(
            `-A INPUT -s ${this.nodeIp(from)}/32 -m statistic --mode random --probability ${loss} -j DROP`,
          );
        }
        const dup = (d.params.dupPct ?? 0) / PERCENT;
        if (from === node && dup > 0) {
          const ip = this.nodeIp(to);
          mangle.push(
            `-A POSTROUTING -d ${ip}/32 -m statistic --mode random --probability ${dup} -j TEE --gateway ${ip}`,
          );
        }
      }
      if (delayMs > 0 && !this.netem) {
        for (const route of this.proxyRoutes(delayed, delayMs)) {
          nat.push(
            `-A OUTPUT -d ${route.host}/32 -p tcp --dport ${route.port} -m owner ! --gid-owner ${DELAY_PROXY_GID} ` +
              `-j REDIRECT --to-ports ${route.listenPort}`,
          );
        }
      }
    }
    const chains = (names: readonly string[]): string[] => names.map((c) => `:${c} ACCEPT [0:0]`);
    return [
      '*filter',
      ...chains(['INPUT', 'FORWARD', 'OUTPUT']),
      ...filter,
      'COMMIT',
      '*mangle',
      ...chains(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']),
      ...mangle,
      'COMMIT',
      '*nat',
      ...chains(['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING']),
      ...nat,
      'COMMIT',
      '',
    ].join('\n');
  }

  /**
   * Replaces each namespace's rules atomically (iptables-restore, through the namespace's
   * long-lived loader), only where they changed.
   */
  private async applyRules(): Promise<void> {
    const empty = this.rulesFor(this.options.nodes[0], [], undefined);
    await Promise.all(
      this.options.nodes.map(async (node) => {
        const rules = this.rulesFor(node, this.cuts, this.degraded);
        const ns = this.namespace(node);
        if ((this.appliedRules.get(ns) ?? empty) === rules) return;
        let loader = this.loaders.get(ns);
        if (!loader) {
          loader = new RulesLoader(
            ['ip', 'netns', 'exec', ns],
            this.options.registry,
            `iptables-restore ${node}`,
          );
          this.loaders.set(ns, loader);
        }
        await loader.apply(rules);
        this.appliedRules.set(ns, rules);
      }),
    );
  }

  private peerPorts(): number[] {
    const services = this.options.peerServices ?? Object.keys(this.options.services);
    return services.map((s) => this.port(s));
  }

  private proxyRoutes(linksFromOneNode: readonly Link[], delayMs: number): DelayProxyConfig['routes'] {
    const all = this.degraded?.links ?? [];
    const routes: DelayProxyConfig['routes'][number][] = [];
    let next = DELAY_PORT_BASE;
    for (const [from, to] of linksFromOneNode) {
      const reverse = all.some(([f, t]) => f === to && t === from);
      for (const port of this.peerPorts()) {
        routes.push({
          listenPort: next++,
          host: this.nodeIp(to),
          port,
          forwardDelayMs: delayMs,
          reverseDelayMs: reverse ? delayMs : 0,
        });
      }
    }
    return routes;
  }

  private async startDelayProxies(links: readonly Link[], delayMs: number): Promise<void> {
    const senders = [...new Set(links.map(([from]) => from))];
    this.proxiedLinks = links;
    // proxyRoutes reads the reverse links from this.degraded, which degrade() sets first.
    for (const node of senders) {
      const config: DelayProxyConfig = {
        gid: DELAY_PROXY_GID,
        sourceHost: this.nodeIp(node),
        routes: this.proxyRoutes(
          links.filter(([from]) => from === node),
          delayMs,
        ),
      };
      this.proxies.set(node, await this.spawnProxy(node, config));
    }
  }

  private spawnProxy(node: string, config: DelayProxyConfig): Promise<Proxy> {
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        this.namespace(node),
        process.execPath,
        '-e',
        DELAY_PROXY_SCRIPT,
        JSON.stringify(config),
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = child.pid;
    if (pid === undefined)
      return Promise.reject(new Error(`cannot start the delay proxy in ${this.namespace(node)}`));
    const resourceId = this.record({
      kind: 'process',
      pid,
      startTime: processStartTime(pid) ?? '',
      label: `delay proxy ${node}`,
    });
    return new Promise((resolve, reject) => {
      let stderr = '';
      const timer = setTimeout(() => {
        fail(
          new Error(`delay proxy in ${this.namespace(node)} not ready after ${PROXY_READY_TIMEOUT_MS} ms`),
        );
      }, PROXY_READY_TIMEOUT_MS);
      const fail = (error: Error): void => {
        clearTimeout(timer);
        this.options.registry.release(resourceId);
        reject(error);
      };
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(timer);
          resolve({ pid, resourceId });
        }
      });
      child.once('exit', (code) => {
        fail(new Error(`delay proxy in ${this.namespace(node)} exited (${code}): ${stderr.trim()}`));
      });
      child.unref();
    });
  }

  /** Cuts the senders' open connections over delayed links so new ones go through the proxy. */
  private async killRedirectedConnections(links: readonly Link[]): Promise<void> {
    this.noteCuts(links);
    for (const [from, to] of links) {
      for (const port of this.peerPorts()) {
        await run([
          'ip',
          'netns',
          'exec',
          this.namespace(from),
          'ss',
          '-K',
          '-t',
          'dst',
          this.nodeIp(to),
          'dport',
          '=',
          `:${port}`,
        ]);
      }
    }
  }

  /** netem where the kernel has it: a prio qdisc whose extra band delays traffic to the link's targets. */
  private async startNetemDelay(links: readonly Link[], delayMs: number): Promise<void> {
    for (const node of new Set(links.map(([from]) => from))) {
      const tc = ['ip', 'netns', 'exec', this.namespace(node), 'tc'];
      await mustRun([...tc, 'qdisc', 'add', 'dev', NODE_IFACE, 'root', 'handle', '1:', 'prio', 'bands', '4']);
      this.netemNodes.add(node);
      await mustRun([
        ...tc,
        'qdisc',
        'add',
        'dev',
        NODE_IFACE,
        'parent',
        '1:4',
        'handle',
        '40:',
        'netem',
        'delay',
        `${delayMs}ms`,
      ]);
      for (const [, to] of links.filter(([from]) => from === node)) {
        await mustRun([...tc, ...netemDstFilterArgs(NODE_IFACE, this.nodeIp(to))]);
      }
    }
  }

  private async stopDelay(): Promise<void> {
    // A stopped proxy ends the connections it relayed, at both ends.
    if (this.proxies.size > 0) this.noteCuts(this.proxiedLinks);
    this.proxiedLinks = [];
    for (const { resourceId } of this.proxies.values()) this.options.registry.release(resourceId);
    this.proxies.clear();
    for (const node of this.netemNodes) {
      await run([
        'ip',
        'netns',
        'exec',
        this.namespace(node),
        'tc',
        'qdisc',
        'del',
        'dev',
        NODE_IFACE,
        'root',
      ]);
    }
    this.netemNodes.clear();
  }

  /** Removes everything this backend created (newest first) and releases it from the registry. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const loader of this.loaders.values()) loader.close();
    this.loaders.clear();
    this.proxies.clear();
    this.netemNodes.clear();
    while (this.resourceIds.length > 0) {
      const id = this.resourceIds.pop()!;
      this.options.registry.release(id);
    }
    await Promise.resolve();
  }
}
