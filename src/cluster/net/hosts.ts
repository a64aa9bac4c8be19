import { join } from 'node:path';

import type { PacketParams } from '../../core/fault.js';
import type { HostLayout } from '../cluster.js';
import type { ResourceRegistry } from '../resources.js';
import { shellLine } from '../runtime/_internals/shell.js';
import { type SshTarget, SshRuntime } from '../runtime/ssh.js';
import type { Address, Link, NetworkBackend } from './backend.js';
import { FixedPorts } from './_internals/fixed-ports.js';

export interface HostsOptions {
  readonly runId: string;
  /** Node i runs on host i. */
  readonly nodes: readonly string[];
  readonly targets: readonly SshTarget[];
  /** Service name → the TCP port every node listens on for it (on its host's address). */
  readonly services: Readonly<Record<string, number>>;
  readonly registry: ResourceRegistry;
}

/** Files of a node's output dir streamed back besides stdout and stderr. */
const STREAMED = ['probe.jsonl'] as const;

/** The run's dir on every host. */
export function hostRoot(runId: string): string {
  return join('/tmp', `mallory-${runId}`);
}

/**
 * Nodes on other hosts, one host per node, reached over SSH (one connection each). Addresses are
 * the hosts' own; a cut link is an iptables rule on the receiving host (`-A INPUT -s <sender> -j
 * DROP`, Jepsen's), recorded in the registry before it is added and removed by exactly the rule it
 * added, so what else is in the host's tables is never touched. Delay, loss and duplication are not
 * done on hosts yet (the run refuses those faults before it starts).
 */
export class HostsBackend implements NetworkBackend {
  readonly kind = 'hosts' as const;
  private readonly runtimes = new Map<string, SshRuntime>();
  private readonly addresses = new Map<string, string>();
  /** Each rule added (as its iptables arguments after -A/-D) → its registry entry. */
  private readonly rules = new Map<string, { node: string; spec: readonly string[]; id: number }>();
  private readonly rootIds = new Map<string, number>();
  private readonly ports: FixedPorts;
  private closed = false;

  private constructor(private readonly options: HostsOptions) {
    this.ports = new FixedPorts(options.services, (node) => this.address(node));
  }

  /** Connects to every host (at once); a `HostError` names the first that failed. */
  static async connect(options: HostsOptions): Promise<HostsBackend> {
    const backend = new HostsBackend(options);
    const results = await Promise.allSettled(options.targets.map((t) => SshRuntime.connect(t)));
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') backend.runtimes.set(options.nodes[i], r.value);
      backend.addresses.set(options.nodes[i], options.targets[i].host);
    });
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      await backend.closeConnections();
      throw failed.reason;
    }
    return backend;
  }

  runtime(node: string): SshRuntime {
    const runtime = this.runtimes.get(node);
    if (!runtime) throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return runtime;
  }

  /** Where the cluster runs each node, and the run's dir on its host. */
  layout(): HostLayout {
    return {
      runtimeOf: (node) => this.runtime(node),
      root: hostRoot(this.options.runId),
      streamed: STREAMED,
      prepareHost: (node) => this.prepareHost(node),
    };
  }

  private async prepareHost(node: string): Promise<void> {
    if (this.rootIds.has(node)) return;
    const runtime = this.runtime(node);
    const root = hostRoot(this.options.runId);
    const id = this.options.registry.record({
      kind: 'remote',
      target: runtime.target,
      undo: shellLine(['rm', '-rf', root]),
      label: `dir ${root} on ${runtime.host}`,
    });
    this.rootIds.set(node, id);
    await runtime.mkdir(root);
  }

  private address(node: string): string {
    const address = this.addresses.get(node);
    if (address === undefined)
      throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return address;
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

  commandPrefix(): readonly string[] {
    return [];
  }

  /** The iptables rule (after `-A`/`-D`) that drops what `from` sends to the host it is on. */
  private dropRule(from: string): readonly string[] {
    return [
      'INPUT',
      '-s',
      this.address(from),
      '-m',
      'comment',
      '--comment',
      `mallory-${this.options.runId}`,
      '-j',
      'DROP',
    ];
  }

  async cut(links: readonly Link[]): Promise<void> {
    const wanted = new Map<string, { node: string; spec: readonly string[] }>();
    for (const [from, to] of links) {
      this.address(from);
      this.address(to);
      const spec = this.dropRule(from);
      wanted.set(`${to} ${spec.join(' ')}`, { node: to, spec });
    }
    const removals = [...this.rules.entries()].filter(([key]) => !wanted.has(key));
    await Promise.all(
      removals.map(async ([key, rule]) => {
        await this.runtime(rule.node).exec(['iptables', '-w', '-D', ...rule.spec]);
        this.options.registry.forget(rule.id);
        this.rules.delete(key);
      }),
    );
    const additions = [...wanted.entries()].filter(([key]) => !this.rules.has(key));
    await Promise.all(
      additions.map(async ([key, rule]) => {
        const runtime = this.runtime(rule.node);
        const id = this.options.registry.record({
          kind: 'remote',
          target: runtime.target,
          undo: shellLine(['iptables', '-w', '-D', ...rule.spec]),
          label: `iptables rule on ${runtime.host}: -A ${rule.spec.join(' ')}`,
        });
        this.rules.set(key, { ...rule, id });
        const result = await runtime.exec(['iptables', '-w', '-A', ...rule.spec]);
        if (result.code !== 0) {
          throw new Error(
            `host ${runtime.host}: iptables -A ${rule.spec.join(' ')} failed: ${result.stderr.trim()}`,
          );
        }
      }),
    );
  }

  degrade(_links: readonly Link[], _params: PacketParams): Promise<void> {
    return Promise.reject(new Error('delay, loss and duplication are not done on SSH hosts yet'));
  }

  heal(): Promise<void> {
    return this.cut([]);
  }

  /** The rules this run added, as `host: spec` lines (for tests and cleanup reports). */
  addedRules(): string[] {
    return [...this.rules.values()].map((r) => `${this.address(r.node)}: ${r.spec.join(' ')}`);
  }

  private async closeConnections(): Promise<void> {
    await Promise.all([...this.runtimes.values()].map((r) => r.close().catch(() => undefined)));
  }

  /** Removes the rules it added and the run's dir on every host, then closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.heal().catch(() => undefined);
    await Promise.all(
      [...this.rootIds.entries()].map(async ([node, id]) => {
        const ok = await this.runtime(node)
          .remove(hostRoot(this.options.runId))
          .then(() => true)
          .catch(() => false);
        // What could not be removed now is left to the registry (its own connection, or cleanup).
        if (ok) this.options.registry.forget(id);
      }),
    );
    this.rootIds.clear();
    await this.closeConnections();
  }
}
