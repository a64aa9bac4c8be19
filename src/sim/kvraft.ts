import type { ClientResult } from '../systems/system.js';
import type { KvraftBug } from '../systems/kvraft/bugs.js';
import { KvraftClient } from '../systems/kvraft/client.js';
import {
  type ClientResponse,
  DEFAULT_ELECTION_MAX_MS,
  DEFAULT_ELECTION_MIN_MS,
  DEFAULT_SNAPSHOT_EVERY,
  type KvraftNode,
  type NodeStatus,
  requestOnce,
  startNode,
} from '../systems/kvraft/in-process.js';
import type { HostPort } from '../systems/kvraft/seams.js';
import type { LinkParams } from './network.js';
import type { SimProcess } from './process.js';
import { type Observed, World, type WorldOptions } from './world.js';

/** A simulated node's data dir on its host's disk. */
export function simDataDir(node: string): string {
  return `/data/${node}`;
}

const CLIENT_PORT = 7001;
const PEER_PORT = 7002;
const CLIENT_HOST = 'client';
const DEFAULT_CLIENT_TIMEOUT_MS = 2000;
const STATUS_TIMEOUT_MS = 500;
const ADMIN_TIMEOUT_MS = 3000;
const ADMIN_ATTEMPTS = 10;
const ADMIN_RETRY_MS = 300;
/** How long `waitLeader` waits by default, in virtual time. */
const LEADER_WAIT_MS = 10_000;

/** A node's flags for one start (the real node's `--bug`, `--election-ms`, `--snapshot-every`, `--join`). */
export interface SimNodeOptions {
  readonly bugs?: readonly KvraftBug[];
  readonly electionMs?: readonly [number, number];
  readonly snapshotEvery?: number;
  readonly join?: boolean;
}

export interface SimKvraftOptions extends WorldOptions {
  readonly nodes: number;
  /** Every node's flags unless a start gives others. */
  readonly node?: SimNodeOptions;
}

type Link = readonly [string, string];

/**
 * A kvraft cluster in a simulated world: nodes `n1`…`nN`, each the production node
 * (`startNode`) on the world's clock, sockets and disk, with clients on a host of their own that
 * partitions never cut. Waits run the world in virtual time.
 */
export class SimKvraft {
  readonly world: World;
  readonly nodes: readonly string[];
  private readonly running = new Map<string, KvraftNode>();
  private readonly client: SimProcess;
  private cuts: Link[] = [];

  constructor(private readonly options: SimKvraftOptions) {
    this.world = new World(options);
    this.nodes = Array.from({ length: options.nodes }, (_, i) => `n${i + 1}`);
    this.client = this.world.start(CLIENT_HOST, () => undefined);
  }

  /** The sockets and timers of the process the clients run in (the `client` host). */
  get clientIo(): SimProcess['io'] {
    return this.client.io;
  }

  address(node: string, port = CLIENT_PORT): HostPort {
    return { host: node, port };
  }

  start(node: string, flags: SimNodeOptions = this.options.node ?? {}): void {
    const peers = new Map(this.nodes.map((n) => [n, this.address(n, PEER_PORT)]));
    const [electionMinMs, electionMaxMs] = flags.electionMs ?? [
      DEFAULT_ELECTION_MIN_MS,
      DEFAULT_ELECTION_MAX_MS,
    ];
    this.world.start(node, (process) => {
      process.env.stdout(`kvraft ${node} started`);
      const running = startNode(
        {
          id: node,
          dataDir: simDataDir(node),
          client: this.address(node),
          peer: this.address(node, PEER_PORT),
          peers,
          members: [...this.nodes],
          join: flags.join ?? false,
          bugs: new Set(flags.bugs ?? []),
          snapshotEvery: flags.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY,
          electionMinMs,
          electionMaxMs,
        },
        process.io,
        process.probe,
      );
      this.running.set(node, running);
      process.onEnd.push(() => {
        if (this.running.get(node) === running) this.running.delete(node);
      });
    });
  }

  /** Starts every node, each with `perNode[node]` or `common`. */
  startAll(common?: SimNodeOptions, perNode: Readonly<Record<string, SimNodeOptions>> = {}): void {
    for (const node of this.nodes) this.start(node, perNode[node] ?? common ?? this.options.node ?? {});
  }

  kill(node: string): void {
    this.world.kill(node);
  }

  /** Cuts `node` off from `from` (default: every other node), both ways unless `both` is false. */
  isolate(node: string, from: readonly string[] = this.nodes.filter((n) => n !== node), both = true): void {
    for (const other of from) {
      this.cuts.push([node, other]);
      if (both) this.cuts.push([other, node]);
    }
    this.world.network.cut(this.cuts);
  }

  /** Reconnects `node` with `with_` (both ways). */
  reconnect(node: string, with_: readonly string[]): void {
    this.cuts = this.cuts.filter(
      ([a, b]) => !((a === node && with_.includes(b)) || (b === node && with_.includes(a))),
    );
    this.world.network.cut(this.cuts);
  }

  heal(): void {
    this.cuts = [];
    this.world.network.cut([]);
  }

  delay(delayMs: number, links: readonly Link[]): void {
    const params: LinkParams = { delayMs };
    this.world.network.degrade(links, params);
  }

  /** Resolves after `ms` of virtual time (a timer of the clients' process). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.client.env.setTimeout(resolve, ms);
    });
  }

  /** A client of the cluster whose calls go to `node` first. */
  clientOf(node: string, timeoutMs = DEFAULT_CLIENT_TIMEOUT_MS): KvraftClient {
    const addresses = new Map(this.nodes.map((n) => [n, this.address(n)]));
    return new KvraftClient(node, addresses, timeoutMs, this.client.io);
  }

  /** One request on a fresh connection, run to its answer. */
  request(node: string, body: Record<string, unknown>, timeoutMs = DEFAULT_CLIENT_TIMEOUT_MS) {
    return this.world.settle(requestOnce(this.address(node), body, timeoutMs, this.client.io));
  }

  /** A request left running while the test drives the world. */
  requestLater(node: string, body: Record<string, unknown>, timeoutMs = DEFAULT_CLIENT_TIMEOUT_MS) {
    return requestOnce(this.address(node), body, timeoutMs, this.client.io);
  }

  /**
   * Adds or removes a member through the leader, retrying as the adapter does (a new leader refuses
   * until it has committed in its term); true once a leader answered ok.
   */
  async changeMember(op: 'add-member' | 'remove-member', node: string): Promise<boolean> {
    for (let attempt = 0; attempt < ADMIN_ATTEMPTS; attempt++) {
      const leader = this.nodes.find((n) => this.statusNow(n)?.role === 'leader');
      if (leader !== undefined) {
        const response = await this.request(leader, { op, node }, ADMIN_TIMEOUT_MS);
        if ('ok' in response && response.ok) return true;
      }
      await this.world.run(ADMIN_RETRY_MS);
    }
    return false;
  }

  async write(node: string, key: string, value: number, timeoutMs?: number): Promise<ClientResult> {
    const client = this.clientOf(node, timeoutMs);
    const result = await this.world.settle(client.write(key, value));
    await client.close();
    return result;
  }

  async read(node: string, key: string, timeoutMs?: number): Promise<ClientResult> {
    const client = this.clientOf(node, timeoutMs);
    const result = await this.world.settle(client.read(key));
    await client.close();
    return result;
  }

  /** The node's status over the network, as the harness asks it; undefined when it does not answer. */
  async status(node: string, timeoutMs = STATUS_TIMEOUT_MS): Promise<NodeStatus | undefined> {
    const response: ClientResponse | { kind: string } = await this.request(node, { op: 'status' }, timeoutMs);
    return 'status' in response ? response.status : undefined;
  }

  /** The node's status read in-process (no virtual time passes); undefined when it is not running. */
  statusNow(node: string): NodeStatus | undefined {
    return this.world.process(node) ? this.running.get(node)?.raft.status() : undefined;
  }

  /** Runs the world until one of `among` is leader in a term above `aboveTerm` (as the real harness waits). */
  waitLeader(
    among: readonly string[] = this.nodes,
    limitMs = LEADER_WAIT_MS,
    aboveTerm = 0,
  ): Promise<NodeStatus> {
    return this.world.runUntil(
      `leader among ${among.join(',')}`,
      () =>
        among
          .map((n) => this.statusNow(n))
          .find((s) => s !== undefined && s.role === 'leader' && s.term > aboveTerm),
      limitMs,
    );
  }

  events(node?: string): Observed[] {
    return node === undefined ? this.world.events : this.world.events.filter((e) => e.node === node);
  }

  /** Everything the node printed, all incarnations. */
  output(node: string): string {
    return this.world.outputOf(node);
  }

  /** How the node's last incarnation ended, if it did. */
  exitOf(node: string): { readonly code: number } | 'killed' | undefined {
    if (this.world.process(node)) return undefined;
    return this.world.ended.get(node)?.at(-1);
  }
}
