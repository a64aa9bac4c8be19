import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { NodeExit } from '../../../../src/cluster/cluster.js';
import type { Link } from '../../../../src/cluster/net/backend.js';
import { sleep } from '../../../../src/core/clock.js';
import type { Event } from '../../../../src/core/event.js';
import { parseProbeLine } from '../../../../src/observe/probe-events.js';
import type { NodeStatus } from '../../../../src/systems/kvraft/_internals/messages.js';
import { KvraftClient } from '../../../../src/systems/kvraft/client.js';
import { kvraft, nodeStatus } from '../../../../src/systems/kvraft/index.js';
import type { ClusterView, NodeSystem, SystemAdapter } from '../../../../src/systems/system.js';
import { TestCluster } from '../../_helpers/cluster.js';
import { nodeIo } from '../../../../src/systems/kvraft/_internals/node-seams.js';

export interface StartOptions {
  readonly join?: boolean;
  readonly bugs?: readonly string[];
  readonly snapshotEvery?: number;
  readonly electionMs?: readonly [number, number];
}

/**
 * Real kvraft nodes on the campaign's own runtime: `Cluster` (process groups, killed by PID, output
 * and probe events under `<runDir>/nodes/<n>/`) on the loopback proxy network a run without root
 * uses (a cut link blackholes its traffic, a delayed one holds it). What the tests add: kvraft's
 * per-node flags (bug switches, election timeout, snapshot interval) at each start, and waits on
 * the nodes' status and probe events.
 */
export class Harness {
  /** The links cut now, by `from>to`. */
  private readonly cuts = new Map<string, Link>();
  private readonly options = new Map<string, StartOptions>();

  private constructor(
    private readonly cluster: TestCluster,
    private readonly adapter: SystemAdapter,
  ) {}

  static async create(count: number, bugs: readonly string[] = []): Promise<Harness> {
    const nodes = Array.from({ length: count }, (_, i) => `n${i + 1}`);
    const adapter = kvraft.create({ bugs });
    let harness: Harness | undefined = undefined;
    // The adapter's launch, with the flags the test gave this start of the node.
    const system: NodeSystem = {
      launch(node, view, launch) {
        const options = harness!.options.get(node) ?? {};
        const source = options.bugs ? kvraft.create({ bugs: options.bugs }) : adapter;
        const spec = source.launch(node, view, { join: options.join ?? launch.join });
        const extra = [
          ...(options.snapshotEvery !== undefined ? ['--snapshot-every', `${options.snapshotEvery}`] : []),
          ...(options.electionMs ? ['--election-ms', options.electionMs.join('-')] : []),
        ];
        return { ...spec, args: [...spec.args, ...extra] };
      },
      ready: (view, signal) => adapter.ready(view, signal),
    };
    const cluster = await TestCluster.create(adapter, nodes, { network: 'proxy', system });
    harness = new Harness(cluster, adapter);
    return harness;
  }

  get nodes(): readonly string[] {
    return this.cluster.nodes;
  }

  /** What the adapter is given as the cluster. */
  get view(): ClusterView {
    return this.cluster;
  }

  get dir(): string {
    return this.cluster.runDir;
  }

  /** Counts the node as a member (or not) in what the adapter is told. */
  setMember(node: string, member: boolean): void {
    this.cluster.setMember(node, member);
  }

  get members(): readonly string[] {
    return this.cluster.members;
  }

  async start(node: string, options: StartOptions = {}): Promise<void> {
    const status = this.cluster.statusOf(node);
    if (status === 'running' || status === 'paused') throw new Error(`${node} is already running`);
    this.options.set(node, options);
    await this.cluster.start(node);
  }

  async startAll(options: StartOptions = {}, perNode: Record<string, StartOptions> = {}): Promise<void> {
    for (const node of this.nodes) await this.start(node, { ...options, ...perNode[node] });
  }

  /** SIGKILLs the node and waits until it is gone. */
  kill(node: string): Promise<void> {
    return this.cluster.kill(node);
  }

  pause(node: string): Promise<void> {
    return this.cluster.pause(node);
  }

  resume(node: string): Promise<void> {
    return this.cluster.resume(node);
  }

  /** Deletes the node's data (it must not be running); the runtime starts it as a joiner from now on. */
  wipe(node: string): Promise<void> {
    return this.cluster.wipe(node);
  }

  /** How the node's process ended, if it ended by itself (a kill is no exit of its own). */
  exitOf(node: string): NodeExit | undefined {
    if (this.cluster.statusOf(node) !== 'exited') return undefined;
    return this.cluster.exits.get(node)?.at(-1);
  }

  /** Cuts (or heals) both directions between `a` and each node in `others`. */
  async isolate(a: string, others: readonly string[] = this.nodes, cut = true): Promise<void> {
    for (const b of others) {
      if (a === b) continue;
      for (const link of [[a, b] as const, [b, a] as const]) {
        if (cut) this.cuts.set(link.join('>'), link);
        else this.cuts.delete(link.join('>'));
      }
    }
    await this.cluster.net.cut([...this.cuts.values()]);
  }

  /** Delays every peer message on the given links (all links when absent) by `ms` (0: no delay). */
  async delay(ms: number, links?: readonly Link[]): Promise<void> {
    const all =
      links ?? this.nodes.flatMap((a) => this.nodes.filter((b) => b !== a).map((b) => [a, b] as const));
    await this.cluster.net.degrade(ms > 0 ? all : [], { target: 'all', delayMs: ms });
  }

  async heal(): Promise<void> {
    this.cuts.clear();
    await this.cluster.net.heal();
  }

  status(node: string, timeoutMs = 500): Promise<NodeStatus | undefined> {
    return nodeStatus(node, this.cluster, timeoutMs);
  }

  client(node: string, timeoutMs = 2000): KvraftClient {
    const addresses = new Map(this.nodes.map((n) => [n, this.cluster.clientAddress(n, 'client')]));
    return new KvraftClient(node, addresses, timeoutMs, nodeIo);
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

  /** The node's probe events so far (all incarnations), read as a run reads them. */
  events(node: string): Event[] {
    const file = path.join(this.cluster.logDir(node), 'probe.jsonl');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line) => parseProbeLine(node, line) ?? []);
  }

  allEvents(): Event[] {
    return this.nodes.flatMap((n) => this.events(n)).sort((a, b) => a.ts - b.ts);
  }

  /** Everything the node wrote, stdout then stderr. */
  output(node: string): string {
    return this.cluster.lines(node).join('\n');
  }

  /** Ends every node and the network, and removes the run's files. */
  async cleanup(): Promise<void> {
    await this.cluster.close();
    await this.adapter.close?.();
  }
}
