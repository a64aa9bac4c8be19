import { join } from 'node:path';

import type { PacketParams } from '../../core/fault.js';
import type { NodeLayout } from '../runtime/node-layout.js';
import type { ResourceRegistry } from '../resources.js';
import { shellLine } from '../../core/shell.js';
import { connectSshHost, DEFAULT_MAX_CHANNELS, type SshHost, type SshTarget } from '../runtime/ssh.js';
import { undoOn } from '../runtime/undo-on.js';
import type { Address, HostCaptureTap, Link, NetworkBackend } from './backend.js';
import { FixedPorts } from './_internals/fixed-ports.js';
import { netemDstFilterArgs } from './_internals/netem-filter.js';
import { controlAcceptRules, inputDropRule } from './_internals/drop-rule.js';
import { mkdirOn, removeOn } from '../runtime/files.js';
import type { ExecResult } from '../runtime/runtime.js';
import { sleep } from '../../core/clock.js';

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

const PERCENT = 100;
/** The netem probe's exit status when the host has no `tc` at all. */
const NO_TC_EXIT = 3;
/** iptables' exit status when its change lost a race with another change of the same tables (nf_tables). */
const IPTABLES_CONFLICT_EXIT = 4;
const IPTABLES_ATTEMPTS = 5;
const IPTABLES_RETRY_MS = 50;
/** What iptables says to a `-D` of a rule that is not there (removed already: nothing left to undo). */
const NO_SUCH_RULE = /does a matching rule exist|Bad rule|No chain\/target\/match/i;

/** The run's dir on every host. */
export function hostRoot(runId: string): string {
  return join('/tmp', `mallory-${runId}`);
}

/**
 * Nodes on other hosts, one host per node, reached over SSH (one connection each). Addresses are
 * the hosts' own; a cut link is an iptables rule on the receiving host (`-A INPUT -s <sender> -j
 * DROP`, Jepsen's), recorded in the registry before it is added and removed by exactly the rule it
 * added, so what else is in the host's tables is never touched; loss is the same rule with an
 * iptables `statistic` match, delay and duplication netem on the sending host (`degrade`).
 */
export class HostsBackend implements NetworkBackend {
  readonly kind = 'hosts' as const;
  private readonly runtimes = new Map<string, SshHost>();
  private readonly addresses = new Map<string, string>();
  /** Each rule added (as its iptables arguments after -A/-D) → its registry entry. */
  private readonly rules = new Map<string, { node: string; spec: readonly string[]; id: number }>();
  private readonly rootIds = new Map<string, number>();
  /** The root qdiscs this run put on the hosts' devices (delay, duplication). */
  private readonly qdiscs: { node: string; device: string; id: number }[] = [];
  private readonly netemProbes = new Map<string, Promise<string | undefined>>();
  /** The hosts whose control connections are exempt from cuts (see `exemptControl`). */
  private readonly exempted = new Map<string, Promise<void>>();
  private readonly controlRules: { node: string; spec: readonly string[]; id: number }[] = [];
  /** The iptables changes of this run, one after another (see `iptables`). */
  private iptablesQueue: Promise<unknown> = Promise.resolve();
  private cuts: readonly Link[] = [];
  private degraded: { readonly links: readonly Link[]; readonly params: PacketParams } | undefined;
  private readonly ports: FixedPorts;
  private closed = false;

  private constructor(private readonly options: HostsOptions) {
    this.ports = new FixedPorts(options.services, (node) => this.address(node));
  }

  /** Connects to every host (at once); a `HostError` names the first that failed. */
  static async connect(options: HostsOptions): Promise<HostsBackend> {
    const backend = new HostsBackend(options);
    const results = await Promise.allSettled(
      options.targets.map((t) => connectSshHost(t, DEFAULT_MAX_CHANNELS)),
    );
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

  runtime(node: string): SshHost {
    const runtime = this.runtimes.get(node);
    if (!runtime) throw new Error(`unknown node "${node}" (nodes: ${this.options.nodes.join(', ')})`);
    return runtime;
  }

  /** Where the cluster runs each node, and the run's dir on its host. */
  layout(): NodeLayout {
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
    const id = this.options.registry.record(
      undoOn(runtime.place, shellLine(['rm', '-rf', root]), `dir ${root} on ${runtime.host}`),
    );
    this.rootIds.set(node, id);
    await mkdirOn(runtime, root);
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

  /** Each host captures its own node's traffic with the others, on the device it reaches them by. */
  hostCaptureTap(): HostCaptureTap {
    const nodes = this.options.nodes;
    return {
      nodes,
      runtime: (node) => this.runtime(node),
      address: (node) => this.address(node),
      device: (node) => {
        const peer = nodes.find((n) => n !== node);
        return peer === undefined ? Promise.resolve('any') : this.deviceTo(node, peer);
      },
      ports: [...new Set(Object.values(this.options.services))],
      prepare: async (node) => {
        await this.prepareHost(node);
        return hostRoot(this.options.runId);
      },
      nodeAt: (ip) => nodes.find((n) => this.addresses.get(n) === ip),
    };
  }

  /**
   * The iptables rule (after `-A`/`-D`) that drops what `from` sends to the host it is on: all of
   * it, or at random with probability `probability` (loss).
   */
  private dropRule(from: string, probability?: number): readonly string[] {
    return inputDropRule(this.address(from), `mallory-${this.options.runId}`, probability);
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
   * Loss is an iptables `statistic` rule on the receiving host, like a cut; delay and duplication
   * are netem on the sending host (a prio qdisc whose extra band holds netem, the links' targets
   * filtered into it, so the host's other traffic — the fuzzer's SSH channels — is untouched).
   * A host without netem cannot delay or duplicate: the run refuses such faults before it starts
   * (`netemMissing`), and one that reaches here anyway is an error naming the host.
   */
  async degrade(links: readonly Link[], params: PacketParams): Promise<void> {
    for (const [from, to] of links) {
      this.address(from);
      this.address(to);
    }
    for (const [name, pct] of [
      ['lossPct', params.lossPct],
      ['dupPct', params.dupPct],
    ] as const) {
      if (pct !== undefined && (pct < 0 || pct > PERCENT))
        throw new Error(`${name} must be 0–100, got ${pct}`);
    }
    if (params.delayMs !== undefined && params.delayMs < 0)
      throw new Error(`delayMs must be ≥ 0, got ${params.delayMs}`);
    const netemLinks = (params.delayMs ?? 0) > 0 || (params.dupPct ?? 0) > 0 ? links : [];
    for (const node of new Set(netemLinks.map(([from]) => from))) {
      const missing = await this.netemMissing(node);
      if (missing !== undefined) {
        throw new Error(`host ${this.runtime(node).host}: delay and duplication need netem: ${missing}`);
      }
    }
    await this.stopNetem();
    this.degraded = { links, params };
    await this.syncRules();
    for (const node of new Set(netemLinks.map(([from]) => from))) {
      await this.startNetem(
        node,
        netemLinks.filter(([from]) => from === node).map(([, to]) => to),
        params,
      );
    }
  }

  heal(): Promise<void> {
    this.cuts = [];
    this.degraded = undefined;
    return this.syncRules().finally(() => this.stopNetem());
  }

  /** Makes the hosts' rules those of the current cuts and loss: removes the others, adds the missing. */
  private async syncRules(): Promise<void> {
    const wanted = new Map<string, { node: string; spec: readonly string[] }>();
    for (const [from, to] of this.cuts) {
      const spec = this.dropRule(from);
      wanted.set(`${to} ${spec.join(' ')}`, { node: to, spec });
    }
    const loss = (this.degraded?.params.lossPct ?? 0) / PERCENT;
    if (loss > 0) {
      for (const [from, to] of this.degraded?.links ?? []) {
        const spec = this.dropRule(from, loss);
        wanted.set(`${to} ${spec.join(' ')}`, { node: to, spec });
      }
    }
    const failures: string[] = [];
    for (const [key, rule] of [...this.rules.entries()].filter(([k]) => !wanted.has(k))) {
      const result = await this.iptables(rule.node, ['-D', ...rule.spec]);
      if (result.code !== 0 && !NO_SUCH_RULE.test(result.stderr)) {
        // Kept in the registry: the run's end (or `mallory cleanup`) tries it again.
        failures.push(
          `host ${this.runtime(rule.node).host}: iptables -D ${rule.spec.join(' ')} failed: ${result.stderr.trim()}`,
        );
        continue;
      }
      this.options.registry.forget(rule.id);
      this.rules.delete(key);
    }
    if (failures.length > 0) throw new Error(failures.join('; '));
    const additions = [...wanted.entries()].filter(([key]) => !this.rules.has(key));
    for (const node of new Set(additions.map(([, rule]) => rule.node))) await this.exemptControl(node);
    for (const [key, rule] of additions) {
      const runtime = this.runtime(rule.node);
      const id = this.options.registry.record(
        undoOn(
          runtime.place,
          shellLine(['iptables', '-w', '-D', ...rule.spec]),
          `iptables rule on ${runtime.host}: -A ${rule.spec.join(' ')}`,
        ),
      );
      this.rules.set(key, { ...rule, id });
      const result = await this.iptables(rule.node, ['-A', ...rule.spec]);
      if (result.code !== 0) {
        throw new Error(
          `host ${runtime.host}: iptables -A ${rule.spec.join(' ')} failed: ${result.stderr.trim()}`,
        );
      }
    }
  }

  /**
   * Runs `iptables -w <args>` on `node`'s host once every change this run asked for before it is
   * done. Hosts may share one kernel (several addresses of one machine, sshd on loopback): there
   * two changes at once race in nf_tables and one fails with status 4 — two identical `-D`s of a
   * cut sent at once removed one rule of the two, and the partition stayed after its heal, cutting
   * the run's own SSH. A race with a program outside the run is tried again, a few times.
   */
  private iptables(node: string, args: readonly string[]): Promise<ExecResult> {
    const result = this.iptablesQueue.then(async () => {
      const runtime = this.runtime(node);
      for (let attempt = 1; ; attempt++) {
        const r = await runtime.exec(['iptables', '-w', ...args]);
        if (r.code !== IPTABLES_CONFLICT_EXIT || attempt === IPTABLES_ATTEMPTS) return r;
        await sleep(IPTABLES_RETRY_MS * attempt);
      }
    });
    this.iptablesQueue = result.catch(() => undefined);
    return result;
  }

  /**
   * Puts the control connections' accept rules on `node`'s host, once, before its first drop (see
   * `controlAcceptRules`); they go with the drops when the run ends.
   */
  private exemptControl(node: string): Promise<void> {
    let done = this.exempted.get(node);
    if (!done) {
      done = this.addControlRules(node);
      this.exempted.set(node, done);
    }
    return done;
  }

  private async addControlRules(node: string): Promise<void> {
    const runtime = this.runtime(node);
    const ports = this.options.targets.map((t) => t.port);
    for (const spec of controlAcceptRules(ports, `mallory-${this.options.runId}`)) {
      const id = this.options.registry.record(
        undoOn(
          runtime.place,
          shellLine(['iptables', '-w', '-D', ...spec]),
          `iptables rule on ${runtime.host}: -I ${spec.join(' ')}`,
        ),
      );
      this.controlRules.push({ node, spec, id });
      const result = await this.iptables(node, ['-I', ...spec]);
      if (result.code !== 0) {
        throw new Error(
          `host ${runtime.host}: iptables -I ${spec.join(' ')} failed: ${result.stderr.trim()}`,
        );
      }
    }
  }

  private async removeControlRules(): Promise<void> {
    const rules = this.controlRules.splice(0);
    this.exempted.clear();
    for (const { node, spec, id } of rules) {
      const result = await this.iptables(node, ['-D', ...spec]);
      if (result.code === 0 || NO_SUCH_RULE.test(result.stderr)) this.options.registry.forget(id);
    }
  }

  /**
   * Why `node`'s host cannot delay or duplicate packets (no `tc`, or a kernel without the netem
   * qdisc), or undefined when it can. Tried once per host, in a network namespace of its own that
   * ends with the command (`unshare --net`), so the probe leaves nothing on the host.
   */
  netemMissing(node: string): Promise<string | undefined> {
    let probe = this.netemProbes.get(node);
    if (!probe) {
      const runtime = this.runtime(node);
      probe = runtime
        .shell(
          `command -v tc >/dev/null 2>&1 || { echo 'tc is missing (apt-get install -y iproute2)' >&2; exit ${NO_TC_EXIT}; }; ` +
            'unshare --net tc qdisc add dev lo root netem delay 1ms',
        )
        .then((result) =>
          result.code === 0
            ? undefined
            : result.code === NO_TC_EXIT
              ? result.stderr.trim()
              : `this host's kernel has no netem qdisc (tc: ${result.stderr.trim().replace(/\.$/, '') || `exit ${result.code}`})`,
        );
      this.netemProbes.set(node, probe);
    }
    return probe;
  }

  /** The device `node`'s host sends to `peer` on (`ip route get`). */
  private async deviceTo(node: string, peer: string): Promise<string> {
    const runtime = this.runtime(node);
    const result = await runtime.exec(['ip', '-o', 'route', 'get', this.address(peer)]);
    const device = / dev (\S+)/.exec(result.stdout)?.[1];
    if (result.code !== 0 || device === undefined) {
      throw new Error(
        `host ${runtime.host}: no route to ${this.address(peer)}: ${result.stderr.trim() || result.stdout.trim()}`,
      );
    }
    return device;
  }

  private async startNetem(node: string, peers: readonly string[], params: PacketParams): Promise<void> {
    const runtime = this.runtime(node);
    const netem = [
      ...((params.delayMs ?? 0) > 0 ? ['delay', `${params.delayMs}ms`] : []),
      ...((params.dupPct ?? 0) > 0 ? ['duplicate', `${params.dupPct}%`] : []),
    ];
    const byDevice = new Map<string, string[]>();
    for (const peer of peers) {
      const device = await this.deviceTo(node, peer);
      byDevice.set(device, [...(byDevice.get(device) ?? []), this.address(peer)]);
    }
    for (const [device, addresses] of byDevice) {
      const id = this.options.registry.record(
        undoOn(
          runtime.place,
          shellLine(['tc', 'qdisc', 'del', 'dev', device, 'root']),
          `netem on ${runtime.host} ${device}`,
        ),
      );
      this.qdiscs.push({ node, device, id });
      const commands: string[][] = [
        ['tc', 'qdisc', 'replace', 'dev', device, 'root', 'handle', '1:', 'prio', 'bands', '4'],
        ['tc', 'qdisc', 'add', 'dev', device, 'parent', '1:4', 'handle', '40:', 'netem', ...netem],
        ...addresses.map((address) => ['tc', ...netemDstFilterArgs(device, address)]),
      ];
      for (const argv of commands) {
        const result = await runtime.exec(argv);
        if (result.code !== 0) {
          throw new Error(`host ${runtime.host}: ${argv.join(' ')} failed: ${result.stderr.trim()}`);
        }
      }
    }
  }

  private async stopNetem(): Promise<void> {
    const qdiscs = this.qdiscs.splice(0);
    await Promise.all(
      qdiscs.map(async ({ node, device, id }) => {
        await this.runtime(node).exec(['tc', 'qdisc', 'del', 'dev', device, 'root']);
        this.options.registry.forget(id);
      }),
    );
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
    await this.removeControlRules().catch(() => undefined);
    await Promise.all(
      [...this.rootIds.entries()].map(async ([node, id]) => {
        const ok = await removeOn(this.runtime(node), hostRoot(this.options.runId))
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
