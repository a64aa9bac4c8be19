import type { NodeStatus, StartOutcome } from '../cluster/cluster.js';
import type { Address } from '../cluster/net/backend.js';
import { isReady, type ReadyAttempt } from '../cluster/node-system.js';
import type { Clock } from '../core/clock.js';
import type { SystemAdapter } from '../systems/system.js';
import { type SimKvraft, type SimNodeOptions, simDataDir } from './kvraft.js';

/** Between two asks of the system's `ready` (as the real cluster polls). */
const READY_POLL_MS = 200;

/**
 * The simulated kvraft cluster as the nemesis sees a real one (its `NemesisCluster`, which sits
 * above this layer, so the fit is checked where the two meet): nodes started, killed, paused,
 * resumed and wiped as the world's own events, each node's status kept as `Cluster` keeps it, and
 * `waitReady` asking the system's own `ready` on the run's (virtual) clock.
 */
export class SimCluster {
  readonly nodes: readonly string[];
  private readonly memberSet: Set<string>;
  private readonly status = new Map<string, NodeStatus>();
  private readonly joiners = new Set<string>();
  private system: SystemAdapter | undefined;

  constructor(
    private readonly kv: SimKvraft,
    private readonly clock: Clock,
    readonly runDir: string,
    private readonly nodeOptions: SimNodeOptions = {},
  ) {
    this.nodes = kv.nodes;
    this.memberSet = new Set(kv.nodes);
  }

  /** The system whose `ready` `waitReady` asks (its adapter needs this cluster, so it comes after). */
  attach(system: SystemAdapter): void {
    this.system = system;
  }

  get members(): readonly string[] {
    return this.nodes.filter((n) => this.memberSet.has(n));
  }

  dataDir(node: string): string {
    return simDataDir(node);
  }

  listen(node: string): Address {
    return this.kv.address(node);
  }

  dial(_from: string, to: string): Address {
    return this.kv.address(to);
  }

  clientAddress(node: string): Address {
    return this.kv.address(node);
  }

  statusOf(node: string): NodeStatus {
    const status = this.status.get(node) ?? 'exited';
    // A process that ended by itself (a crash, a fail-stop) is `exited`, as the real cluster says.
    if ((status === 'running' || status === 'paused') && this.kv.exitOf(node) !== undefined) return 'exited';
    return status;
  }

  nodesIn(...statuses: NodeStatus[]): string[] {
    return this.nodes.filter((n) => statuses.includes(this.statusOf(n)));
  }

  isMember(node: string): boolean {
    return this.memberSet.has(node);
  }

  setMember(node: string, member: boolean): void {
    if (member) this.memberSet.add(node);
    else this.memberSet.delete(node);
  }

  /** The nodes run in this process: nothing is on another host. */
  readonly onHosts = false;

  startAll(): Promise<void> {
    for (const node of this.members) void this.start(node);
    return Promise.resolve();
  }

  /** A hard reset: every node killed, its disk wiped, the whole cluster started afresh, all members. */
  async restartFresh(): Promise<void> {
    for (const node of this.nodes) {
      await this.kill(node, 'exited');
      this.kv.world.wipeDisk(node);
      this.memberSet.add(node);
    }
    this.joiners.clear();
    await this.startAll();
  }

  /** Where the node's output is written (`nodes/<node>` under the run's dir, as a real run keeps it). */
  logDir(node: string): string {
    return `${this.runDir}/nodes/${node}`;
  }

  /** Ends every node (the world stays, for what the run reads of it afterwards). */
  close(): Promise<void> {
    for (const node of this.nodes) {
      if (this.kv.world.process(node)) this.kv.kill(node);
      this.status.set(node, 'exited');
    }
    return Promise.resolve();
  }

  start(node: string): Promise<StartOutcome> {
    const status = this.statusOf(node);
    if (status === 'running' || status === 'paused') return Promise.resolve('up');
    const join = this.joiners.delete(node);
    this.kv.start(node, join ? { ...this.nodeOptions, join } : this.nodeOptions);
    this.status.set(node, 'running');
    return Promise.resolve('started');
  }

  kill(node: string, as: NodeStatus = 'killed'): Promise<void> {
    this.kv.kill(node);
    this.status.set(node, as);
    return Promise.resolve();
  }

  pause(node: string): void {
    if (this.statusOf(node) !== 'running') return;
    this.kv.world.pause(node);
    this.status.set(node, 'paused');
  }

  resume(node: string): void {
    if (this.statusOf(node) !== 'paused') return;
    this.kv.world.resume(node);
    this.status.set(node, 'running');
  }

  wipe(node: string): void {
    this.joiners.add(node);
    this.kv.world.wipeDisk(node);
  }

  /** Asks the system's `ready` until it says so or `timeoutMs` of the run's clock has passed. */
  async waitReady(timeoutMs: number, signal?: AbortSignal, attempts?: ReadyAttempt[]): Promise<boolean> {
    const system = this.system;
    if (!system) throw new Error('SimCluster.waitReady: attach the system first');
    const start = this.clock.nowMs();
    const deadline = start + timeoutMs;
    while (this.clock.nowMs() < deadline && !signal?.aborted) {
      const begun = this.clock.nowMs();
      const bounded = new AbortController();
      const cancel = this.clock.timer(deadline - begun, () => {
        bounded.abort();
      });
      const answer = await system.ready(
        this,
        signal ? AbortSignal.any([signal, bounded.signal]) : bounded.signal,
      );
      cancel();
      const ready = isReady(answer);
      const attempt: ReadyAttempt = { atMs: begun - start, ms: this.clock.nowMs() - begun, ready };
      attempts?.push(typeof answer === 'boolean' ? attempt : { ...attempt, checks: answer.checks });
      if (ready) return true;
      await this.clock.sleep(READY_POLL_MS, signal);
    }
    return false;
  }
}
