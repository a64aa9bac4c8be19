import { join } from 'node:path';

import type { PacketParams } from '../../core/fault.js';
import type { NodeLayout } from '../runtime/node-layout.js';
import type { ResourceRegistry } from '../resources.js';
import { containerRuntime, docker, type DockerEndpoint, dockerArgv } from '../runtime/docker.js';
import type { NodeRuntime } from '../runtime/runtime.js';
import type { Address, Link, NetworkBackend } from './backend.js';
import { inputDropRule } from './_internals/drop-rule.js';
import { isRunnableOn, mkdirOn } from '../runtime/files.js';

export interface ContainersOptions {
  readonly runId: string;
  /** Node i runs in container i. */
  readonly nodes: readonly string[];
  readonly image: string;
  readonly endpoint: DockerEndpoint;
  /** Service name → the TCP port every node listens on for it (on its container's address). */
  readonly services: Readonly<Record<string, number>>;
  readonly registry: ResourceRegistry;
}

/** Files of a node's output dir streamed back besides stdout and stderr. */
const STREAMED = ['probe.jsonl'] as const;
/** How long `docker run` of one container may take (the daemon creates its layer and network). */
const CREATE_TIMEOUT_MS = 60_000;
const PERCENT = 100;
/** The ways an image may hold iptables: its own name, or the multi-call binaries behind it. */
const IPTABLES_CANDIDATES: readonly (readonly string[])[] = [
  ['iptables'],
  ['xtables-nft-multi', 'iptables'],
  ['xtables-legacy-multi', 'iptables'],
];

/** The run's network and the name of a node's container: `mallory-<run id>[-<node>]`. */
export function containerName(runId: string, node?: string): string {
  return node === undefined ? `mallory-${runId}` : `mallory-${runId}-${node}`;
}

/** The run's dir in every container (on a tmpfs the container mounts at /tmp). */
export function containerRoot(runId: string): string {
  return join('/tmp', `mallory-${runId}`);
}

/** How iptables is called in a container (`iptables`, or the multi-call binary), undefined when it has none. */
export async function findIptables(runtime: NodeRuntime): Promise<readonly string[] | undefined> {
  for (const argv of IPTABLES_CANDIDATES) if (await isRunnableOn(runtime, argv[0])) return argv;
  return undefined;
}

/**
 * Nodes in containers created from an image, one per node, on a bridge network the run creates
 * (through the docker client, so `DOCKER_HOST`/`--docker-host` choose the daemon). Addresses are
 * the containers' own on that network. A cut link is an iptables rule in the receiving container
 * (`-A INPUT -s <sender> -j DROP`, it has NET_ADMIN); the rules live in the container's network
 * namespace and go with it. The network and every container are recorded in the registry before
 * they are made and removed when the backend closes (by the registry on Ctrl-C, by `mallory
 * cleanup` after a SIGKILL).
 */
export class ContainersBackend implements NetworkBackend {
  readonly kind = 'containers' as const;
  private readonly runtimes = new Map<string, NodeRuntime>();
  private readonly addresses = new Map<string, string>();
  private readonly iptables = new Map<string, readonly string[]>();
  /** Each rule added (keyed by the receiving node and the rule) → its node and iptables arguments after -A/-D. */
  private readonly rules = new Map<string, { node: string; spec: readonly string[] }>();
  /** The links cut now, and the links losing packets now with the share lost. */
  private cuts: readonly Link[] = [];
  private loss: { readonly links: readonly Link[]; readonly share: number } | undefined;
  /** Registry entries: the network's, then each container's. */
  private readonly ids: number[] = [];
  private closed = false;

  private constructor(private readonly options: ContainersOptions) {}

  /** Creates the network and the containers (at once), and learns their addresses. */
  static async create(options: ContainersOptions): Promise<ContainersBackend> {
    const backend = new ContainersBackend(options);
    try {
      await backend.make();
    } catch (error) {
      await backend.close();
      throw error;
    }
    return backend;
  }

  private async must(args: readonly string[], timeoutMs?: number): Promise<string> {
    const result = await docker(this.options.endpoint, args, timeoutMs !== undefined ? { timeoutMs } : {});
    if (result.code !== 0) {
      throw new Error(
        `docker ${args.slice(0, 2).join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`,
      );
    }
    return result.stdout.toString().trim();
  }

  private async make(): Promise<void> {
    const { runId, endpoint, registry, image } = this.options;
    const network = containerName(runId);
    this.ids.push(
      registry.record({
        kind: 'command',
        undo: dockerArgv(endpoint, ['network', 'rm', network]),
        label: `docker network ${network}`,
      }),
    );
    await this.must(['network', 'create', '--driver', 'bridge', '--label', `mallory.run=${runId}`, network]);
    await Promise.all(
      this.options.nodes.map(async (node) => {
        const name = containerName(runId, node);
        this.ids.push(
          registry.record({
            kind: 'command',
            undo: dockerArgv(endpoint, ['rm', '-f', '-v', name]),
            label: `docker container ${name} (${node})`,
          }),
        );
        await this.must(
          [
            'run',
            '--detach',
            '--name',
            name,
            '--hostname',
            node,
            '--network',
            network,
            '--cap-add',
            'NET_ADMIN',
            // PID 1 reaps what a killed node group leaves; the node's files live on a tmpfs.
            '--init',
            '--tmpfs',
            '/tmp',
            '--label',
            `mallory.run=${runId}`,
            '--entrypoint',
            'sleep',
            image,
            'infinity',
          ],
          CREATE_TIMEOUT_MS,
        );
        const address = await this.must([
          'inspect',
          '--format',
          `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`,
          name,
        ]);
        if (address === '') throw new Error(`container ${name} has no address on network ${network}`);
        this.addresses.set(node, address);
        this.runtimes.set(node, containerRuntime(endpoint, name));
      }),
    );
  }

  runtime(node: string): NodeRuntime {
    const runtime = this.runtimes.get(node);
    if (!runtime) throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return runtime;
  }

  /** Where the cluster runs each node, and the run's dir in its container. */
  layout(): NodeLayout {
    const root = containerRoot(this.options.runId);
    return {
      runtimeOf: (node) => this.runtime(node),
      root,
      streamed: STREAMED,
      // Inside the container: it goes with the container.
      prepareHost: (node) => mkdirOn(this.runtime(node), root),
    };
  }

  /** Each node's container address. */
  nodeAddresses(): Readonly<Record<string, string>> {
    return Object.fromEntries(this.addresses);
  }

  private address(node: string): string {
    const address = this.addresses.get(node);
    if (address === undefined)
      throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return address;
  }

  private port(service: string): number {
    const port = this.options.services[service];
    if (port === undefined) {
      throw new Error(
        `unknown service "${service}" (services: ${Object.keys(this.options.services).join(', ')})`,
      );
    }
    return port;
  }

  listen(node: string, service: string): Address {
    return { host: this.address(node), port: this.port(service) };
  }

  dial(_from: string, to: string, service: string): Address {
    return { host: this.address(to), port: this.port(service) };
  }

  clientAddress(node: string, service: string): Address {
    return { host: this.address(node), port: this.port(service) };
  }

  commandPrefix(): readonly string[] {
    return [];
  }

  private async iptablesOf(node: string): Promise<readonly string[]> {
    const known = this.iptables.get(node);
    if (known) return known;
    const found = await findIptables(this.runtime(node));
    if (!found)
      throw new Error(`${this.runtime(node).host} has no iptables: partitions need it in the image`);
    this.iptables.set(node, found);
    return found;
  }

  /**
   * The iptables rule (after `-A`/`-D`) that drops what `from` sends to the container it is in,
   * or a `probability` share of it (packet loss).
   */
  private dropRule(from: string, probability?: number): readonly string[] {
    return inputDropRule(this.address(from), `mallory-${this.options.runId}`, probability);
  }

  private async iptablesRun(node: string, op: '-A' | '-D', spec: readonly string[]): Promise<void> {
    const runtime = this.runtime(node);
    const result = await runtime.exec([...(await this.iptablesOf(node)), '-w', op, ...spec]);
    if (result.code !== 0) {
      throw new Error(`${runtime.host}: iptables ${op} ${spec.join(' ')} failed: ${result.stderr.trim()}`);
    }
  }

  async cut(links: readonly Link[]): Promise<void> {
    for (const [from, to] of links) {
      this.address(from);
      this.address(to);
    }
    this.cuts = links;
    await this.syncRules();
  }

  /**
   * Packet loss: an iptables `statistic` rule in the receiving container, as a cut is. Delay and
   * duplication are not done in containers (a run asking for them is refused before it starts).
   */
  async degrade(links: readonly Link[], params: PacketParams): Promise<void> {
    if ((params.delayMs ?? 0) > 0 || (params.dupPct ?? 0) > 0) {
      throw new Error('delay and duplication are not done in containers: packet faults there are loss only');
    }
    const loss = params.lossPct ?? 0;
    if (loss < 0 || loss > PERCENT) throw new Error(`lossPct must be 0–100, got ${loss}`);
    for (const [from, to] of links) {
      this.address(from);
      this.address(to);
    }
    this.loss = loss > 0 ? { links, share: loss / PERCENT } : undefined;
    await this.syncRules();
  }

  heal(): Promise<void> {
    this.cuts = [];
    this.loss = undefined;
    return this.syncRules();
  }

  /** Makes the containers' rules those of the current cuts and loss: removes the others, adds the missing. */
  private async syncRules(): Promise<void> {
    const wanted = new Map<string, { node: string; spec: readonly string[] }>();
    for (const [from, to] of this.cuts) {
      const spec = this.dropRule(from);
      wanted.set(`${to} ${spec.join(' ')}`, { node: to, spec });
    }
    for (const [from, to] of this.loss?.links ?? []) {
      const spec = this.dropRule(from, this.loss?.share);
      wanted.set(`${to} ${spec.join(' ')}`, { node: to, spec });
    }
    const removals = [...this.rules.entries()].filter(([key]) => !wanted.has(key));
    await Promise.all(
      removals.map(async ([key, rule]) => {
        await this.iptablesRun(rule.node, '-D', rule.spec);
        this.rules.delete(key);
      }),
    );
    const additions = [...wanted.entries()].filter(([key]) => !this.rules.has(key));
    await Promise.all(
      additions.map(async ([key, rule]) => {
        await this.iptablesRun(rule.node, '-A', rule.spec);
        this.rules.set(key, rule);
      }),
    );
  }

  /** Removes every container, then the network (what could not be removed is left to the registry). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.runtimes.values()].map((r) => r.close()));
    const [networkId, ...containerIds] = this.ids;
    const names = this.options.nodes.map((node) => containerName(this.options.runId, node));
    const removed = await docker(this.options.endpoint, ['rm', '-f', '-v', ...names], {
      timeoutMs: CREATE_TIMEOUT_MS,
    });
    if (removed.code === 0) for (const id of containerIds) this.options.registry.forget(id);
    else for (const id of containerIds) this.options.registry.release(id);
    if (networkId !== undefined) this.options.registry.release(networkId);
    this.ids.length = 0;
  }
}
