import { appendFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { monoNs, sleep } from '../core/clock.js';
import type { NodeClockPreload, RemoveSharedFiles } from './clock-preload.js';
import type { DiskLayer } from './disk-layer.js';
import type { Address, NetworkBackend } from './net/backend.js';
import { isReady, type ClusterView, type NodeSystem, type ReadyAttempt } from './node-system.js';
import type { ResourceRegistry } from './resources.js';
import { signalGroupNow } from './runtime/local.js';
import { localLayout } from './runtime/local-layout.js';
import type { NodeLayout } from './runtime/node-layout.js';
import { type FileStream, followFile } from './runtime/follow.js';
import type { NodeRuntime, RuntimeProcess } from './runtime/runtime.js';
import { boundedReady, ReadyDidNotAnswer } from './_internals/bounded-ready.js';
import { checkedLaunchSpec } from './_internals/launch-spec.js';
import { copyTree, relocateText } from './_internals/copy-tree.js';
import { BuiltPrograms } from './built-program.js';
import { fetchSnapshot, snapshotDir, uploadDir } from './runtime/_internals/dir-transfer.js';
import { HostFiles } from './_internals/host-files.js';
import { waitGroupsStopped } from './_internals/group-stopped.js';
import { emptyOn, mkdirOn, uploadTo } from './runtime/files.js';

export type NodeStatus = 'running' | 'paused' | 'killed' | 'exited' | 'removed';

/** What `Cluster.start` did: `up` when the node ran already, or was being started. */
export type StartOutcome = 'started' | 'up';

/** A node process that ended. `expected` is false when nothing we did ended it. */
export interface NodeExit {
  readonly node: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly expected: boolean;
  readonly ts: number;
  readonly wallMs: number;
  /**
   * When the exited process was started (monotonic ns, taken just before the start): a fault
   * healed before that cannot have made it exit.
   */
  readonly startedNs?: number;
  /** The sizes of the node's log files (`stdout.log`, `stderr.log`) when it exited. */
  readonly logBytes?: Readonly<Record<string, number>>;
}

interface NodeProcess {
  proc: RuntimeProcess;
  runtime: NodeRuntime;
  /** Removes the files the process leaves behind if killed (libfaketime's shared memory). */
  removeLeftovers: RemoveSharedFiles | undefined;
  expectExit: boolean;
  exited: Promise<void>;
}

/** What a node's next start depends on, besides its data dir: kept with a checkpoint of it. */
export interface NodeState {
  readonly node: string;
  readonly status: NodeStatus;
  readonly member: boolean;
  /** Wiped since the bootstrap: it starts as a joiner (`LaunchOptions.join`). */
  readonly joiner: boolean;
  /** Where its data dir was: files that name it (a config's `dir`) are moved to the new one. */
  readonly dataDir?: string | undefined;
}

/** What `Cluster.copyDataDirs` did: how long the nodes were stopped and what it copied. */
export interface DataDirsCopy {
  readonly pauseMs: number;
  readonly bytes: Readonly<Record<string, number>>;
  readonly states: readonly NodeState[];
}

export interface ClusterOptions {
  readonly system: NodeSystem;
  readonly nodes: readonly string[];
  readonly runDir: string;
  readonly runId: string;
  readonly network: NetworkBackend;
  readonly registry: ResourceRegistry;
  readonly onExit?: (exit: NodeExit) => void;
  /** Preloads libfaketime into every node, so clock faults can move its wall clock. */
  readonly clock?: NodeClockPreload;
  /**
   * Mounts the FUSE disk layer over every node's data dir before it first starts (disk faults): a
   * `DiskLayer`, over the nodes' runtimes.
   */
  readonly disk?: Pick<DiskLayer, 'mount' | 'close'>;
  /**
   * Where each node runs: this host when absent. A node whose runtime does not share this
   * machine's files has its data and output on its host (under `NodeLayout.root`, output in
   * `<root>/nodes/<node>`), its output streamed back to `logDir(node)` as it is written.
   */
  readonly layout?: NodeLayout;
}

/** Where the nodes run: each node's runtime and the dir of the run on its host. */
export type HostLayout = NodeLayout;

const READY_POLL_MS = 200;
/** How long a checkpoint's copy waits for the stopped nodes' tasks to stop (each finishing its system call). */
const STOP_WAIT_MS = 1_000;
/** The least a single `ready()` call is given, even when the wait has less left. */
const MIN_READY_CALL_MS = 500;
const LOG_FILES = ['stdout.log', 'stderr.log'] as const;

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Waits for every promise, then throws the first rejection: nothing is still writing when the
 * caller cleans up after a failure.
 */
async function settleAll(promises: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(promises)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * The nodes of one run as real OS processes: each in its own process group, with its own data dir
 * and its output under `<runDir>/nodes/<n>/`. Everything it creates is in the run's registry.
 */
export class Cluster implements ClusterView {
  readonly nodes: readonly string[];
  readonly runDir: string;
  private readonly system: NodeSystem;
  private readonly network: NetworkBackend;
  private readonly registry: ResourceRegistry;
  private readonly onExit: ((exit: NodeExit) => void) | undefined;
  private readonly clock: NodeClockPreload | undefined;
  private readonly disk: Pick<DiskLayer, 'mount' | 'close'> | undefined;
  private readonly layout: NodeLayout;
  /** Whether some node runs where this machine's files are not (its data and output are on its host). */
  private readonly remote: boolean;
  private readonly root: string;
  /** The streams of remote nodes' output back into their log dirs. */
  private readonly streams: FileStream[] = [];
  private readonly preparedHosts = new Set<string>();
  /** What `prepare`/`launch` wrote here for nodes on other hosts, owed to their hosts. */
  private readonly hostFiles: HostFiles | undefined;
  /** Where the programs built here (`LaunchSpec.built`) run from on each host. */
  private readonly builtPrograms: BuiltPrograms | undefined;
  private readonly procs = new Map<string, NodeProcess>();
  /** The starts under way, one per node at most. */
  private readonly starting = new Map<string, Promise<void>>();
  private readonly status = new Map<string, NodeStatus>();
  private readonly memberSet: Set<string>;
  /** Nodes wiped since the cluster was bootstrapped: they come back only by joining it. */
  private readonly joiners = new Set<string>();
  private prepared = false;

  constructor(options: ClusterOptions) {
    this.nodes = options.nodes;
    this.runDir = options.runDir;
    this.system = options.system;
    this.network = options.network;
    this.registry = options.registry;
    this.onExit = options.onExit;
    this.clock = options.clock;
    this.disk = options.disk;
    this.layout = options.layout ?? localLayout(options.runId);
    this.remote = this.nodes.some((node) => !this.sharesFiles(node));
    // A remote run's dir is recorded here too: an adapter that makes a dir under it on this host
    // (kvraft's probe dir) leaves nothing behind.
    this.root = this.layout.root;
    this.registry.record({ kind: 'dir', path: this.root });
    if (!this.remote) mkdirSync(this.root, { recursive: true });
    this.memberSet = new Set(options.nodes);
    this.hostFiles = this.remote ? new HostFiles(this.root, this.nodes) : undefined;
    this.builtPrograms = this.remote ? new BuiltPrograms(this.root) : undefined;
    for (const node of this.nodes) {
      this.status.set(node, 'exited');
      if (this.sharesFiles(node)) mkdirSync(this.dataDir(node), { recursive: true });
      mkdirSync(this.logDir(node), { recursive: true });
    }
  }

  /** Whether the nodes run where this machine's files are not: their data dirs are on their hosts. */
  get onHosts(): boolean {
    return this.remote;
  }

  /** Where the node runs. */
  runtimeOf(node: string): NodeRuntime {
    return this.layout.runtimeOf(node);
  }

  /** Whether the node's runtime reads and writes this machine's files. */
  private sharesFiles(node: string): boolean {
    return this.runtimeOf(node).capabilities.sharedFilesystem;
  }

  /** The node's output dir on its host (its `logDir` when its runtime shares this machine's files). */
  private hostLogDir(node: string): string {
    return this.sharesFiles(node) ? this.logDir(node) : join(this.root, 'nodes', node);
  }

  /**
   * What the system's `launch` sees: on another host the run's dir is the one there, so the files
   * it names for a node (kvraft's probe file) are on the node's host.
   */
  private launchView(): ClusterView {
    if (!this.remote) return this;
    const members = (): readonly string[] => this.members;
    return {
      nodes: this.nodes,
      get members() {
        return members();
      },
      runDir: this.root,
      dataDir: (node) => this.dataDir(node),
      listen: (node, service) => this.listen(node, service),
      dial: (from, to, service) => this.dial(from, to, service),
      clientAddress: (node, service) => this.clientAddress(node, service),
    };
  }

  /** Once per remote node: its dirs on its host, and its output streamed back as it is written. */
  private async prepareHost(node: string): Promise<void> {
    if (this.sharesFiles(node) || this.preparedHosts.has(node)) return;
    const runtime = this.runtimeOf(node);
    await this.layout.prepareHost(node);
    await mkdirOn(runtime, this.dataDir(node));
    await mkdirOn(runtime, this.hostLogDir(node));
    this.preparedHosts.add(node);
    for (const file of [...LOG_FILES, ...this.layout.streamed]) {
      const local = join(this.logDir(node), file);
      this.streams.push(
        followFile(
          runtime,
          join(this.hostLogDir(node), file),
          (chunk) => {
            appendFileSync(local, chunk);
          },
          this.registry,
        ),
      );
    }
  }

  /**
   * Copies to the node's host what `prepare`/`launch` wrote here for it (its configs), to the same
   * paths under the run's dir there, which the run removes with the dir.
   */
  private async uploadOwed(node: string): Promise<void> {
    if (!this.hostFiles) return;
    const { dirs, files } = this.hostFiles.take(node);
    const runtime = this.runtimeOf(node);
    for (const dir of new Set([...dirs, ...files.map((f) => dirname(f))])) await mkdirOn(runtime, dir);
    for (const file of files) await uploadTo(runtime, file, file);
  }

  get members(): readonly string[] {
    return this.nodes.filter((n) => this.memberSet.has(n));
  }

  dataDir(node: string): string {
    return join(this.root, node);
  }

  logDir(node: string): string {
    return join(this.runDir, 'nodes', node);
  }

  listen(node: string, service: string): Address {
    return this.network.listen(node, service);
  }

  dial(from: string, to: string, service: string): Address {
    return this.network.dial(from, to, service);
  }

  clientAddress(node: string, service: string): Address {
    return this.network.clientAddress(node, service);
  }

  statusOf(node: string): NodeStatus {
    return this.status.get(node) ?? 'exited';
  }

  /** The PID of the node's process (its group's leader), while it has one. */
  pidOf(node: string): number | undefined {
    return this.procs.get(node)?.proc.pid;
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

  async startAll(): Promise<void> {
    for (const node of this.members) await this.start(node);
  }

  /**
   * A hard reset: stops every node, wipes every data dir and starts the whole cluster afresh, all
   * nodes members again — for a cluster that no longer recovers by healing alone.
   */
  async restartFresh(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.kill(node, 'exited')));
    for (const node of this.nodes) {
      await this.wipe(node);
      this.memberSet.add(node);
    }
    this.joiners.clear();
    await this.startAll();
  }

  /**
   * Starts a node that is not running, on its data dir: `started`. A node that runs (or is paused),
   * or whose start is under way, is not started again: `up` (two processes of one node would both
   * claim its place in the cluster). A node wiped since the bootstrap starts as a joiner, every time
   * until the next bootstrap: started with the bootstrap's configuration, it would claim a member id
   * the cluster has removed.
   */
  async start(node: string): Promise<StartOutcome> {
    const underWay = this.starting.get(node);
    if (underWay) {
      await underWay;
      return 'up';
    }
    const status = this.statusOf(node);
    if (status === 'running' || status === 'paused') return 'up';
    const launched = this.launchNode(node).finally(() => this.starting.delete(node));
    this.starting.set(node, launched);
    await launched;
    return 'started';
  }

  private async launchNode(node: string): Promise<void> {
    await this.prepareHost(node);
    await this.disk?.mount(node, this.dataDir(node), this.logDir(node));
    const view = this.launchView();
    const track = <T>(call: () => T | Promise<T>): Promise<T> =>
      this.hostFiles ? this.hostFiles.track(call) : Promise.resolve(call());
    if (!this.prepared) {
      await track(() => this.system.prepare?.(view));
      this.prepared = true;
    }
    const runtime = this.runtimeOf(node);
    const spec = await checkedLaunchSpec(
      await track(() => this.system.launch(node, view, { join: this.joiners.has(node) })),
      node,
      this.dataDir(node),
      runtime.capabilities.sharedFilesystem ? undefined : runtime,
    );
    await this.uploadOwed(node);
    const command =
      spec.built === true && !runtime.capabilities.sharedFilesystem && this.builtPrograms
        ? await this.builtPrograms.place(runtime, spec.command)
        : spec.command;
    const prefix = this.network.commandPrefix(node);
    const logDir = this.hostLogDir(node);
    let started: RuntimeProcess;
    const startedNs = monoNs();
    try {
      started = await runtime.start(
        {
          argv: [...prefix, command, ...spec.args],
          env: { ...spec.env, ...(await this.clock?.env(node)), MALLORY_NODE: node },
          cwd: this.dataDir(node),
          stdout: join(logDir, 'stdout.log'),
          stderr: join(logDir, 'stderr.log'),
          label: `${node}: ${command}`,
        },
        this.registry,
      );
    } catch (error) {
      if (error instanceof Error && / did not start /.test(error.message)) {
        throw new Error(`could not start ${node}: ${error.message}`);
      }
      throw error;
    }
    const pid = started.pid;
    let resolveExit!: () => void;
    const exited = new Promise<void>((resolve) => (resolveExit = resolve));
    const proc: NodeProcess = {
      proc: started,
      runtime,
      removeLeftovers: await this.clock?.trackSharedFiles(node, pid, this.registry),
      expectExit: false,
      exited,
    };
    this.procs.set(node, proc);
    this.status.set(node, 'running');
    void started.exited.then(async ({ code, signal }) => {
      // A node is its process group: what its process started (redis's sentinel beside its server)
      // must not outlive it, serving as a node that is down and holding its ports for the restart.
      if (!proc.expectExit) await proc.runtime.signal(proc.proc, 'SIGKILL').catch(() => undefined);
      await Promise.resolve(proc.removeLeftovers?.()).catch(() => undefined);
      if (this.procs.get(node) === proc) {
        this.procs.delete(node);
        if (!proc.expectExit) this.status.set(node, 'exited');
      }
      const logBytes = Object.fromEntries(LOG_FILES.map((f) => [f, fileSize(join(this.logDir(node), f))]));
      this.onExit?.({
        node,
        code,
        signal,
        expected: proc.expectExit,
        ts: monoNs(),
        wallMs: Date.now(),
        startedNs,
        logBytes,
      });
      resolveExit();
    });
  }

  /** SIGKILLs the node's process group and waits for it to end. */
  async kill(node: string, as: NodeStatus = 'killed'): Promise<void> {
    // A start under way ends with a process: that one is killed.
    await this.starting.get(node)?.catch(() => undefined);
    const proc = this.procs.get(node);
    this.status.set(node, as);
    if (!proc) return;
    proc.expectExit = true;
    await proc.runtime.signal(proc.proc, 'SIGKILL');
    await proc.exited;
  }

  /** SIGSTOPs the node's process group (on this host, before the promise: the status says it at once). */
  async pause(node: string): Promise<void> {
    const proc = this.procs.get(node);
    if (!proc || this.statusOf(node) !== 'running') return;
    const sent = proc.runtime.signal(proc.proc, 'SIGSTOP');
    this.status.set(node, 'paused');
    await sent;
  }

  /** SIGCONTs the node's process group. */
  async resume(node: string): Promise<void> {
    const proc = this.procs.get(node);
    if (!proc || this.statusOf(node) !== 'paused') return;
    const sent = proc.runtime.signal(proc.proc, 'SIGCONT');
    this.status.set(node, 'running');
    await sent;
  }

  /**
   * Deletes the node's data (the node must not be running); from now on it starts as a joiner. The
   * dir itself stays: it may be the disk layer's mount point.
   */
  async wipe(node: string): Promise<void> {
    const dir = this.dataDir(node);
    this.joiners.add(node);
    if (!this.sharesFiles(node)) {
      await emptyOn(this.runtimeOf(node), dir);
      this.hostFiles?.wiped(node, dir);
      return;
    }
    mkdirSync(dir, { recursive: true });
    for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
  }

  /** Every node's status, membership and whether it starts as a joiner. */
  nodeStates(): NodeState[] {
    return this.nodes.map((node) => ({
      node,
      status: this.statusOf(node),
      member: this.memberSet.has(node),
      joiner: this.joiners.has(node),
      dataDir: this.dataDir(node),
    }));
  }

  /**
   * Copies every node's data dir to `<to>/<node>/` as one consistent cut: every running node's
   * process group is stopped (SIGSTOP) for the copy and continued after it, its status unchanged.
   * Synchronous, so nothing else of the fuzzer runs while the nodes are stopped.
   */
  copyDataDirs(to: string): DataDirsCopy {
    if (this.remote) throw new Error('copyDataDirs: nodes on other hosts are copied by copyHostDataDirs');
    const running = [...this.procs.entries()].filter(([node]) => this.statusOf(node) === 'running');
    const states = this.nodeStates();
    const begun = performance.now();
    for (const [, proc] of running) signalGroupNow(proc.proc, 'SIGSTOP');
    const bytes: Record<string, number> = {};
    try {
      // Copied once each has stopped: a task in a write finishes it before it stops. One still
      // running after the bound (a write held up longer) is copied as it is.
      waitGroupsStopped(new Set(running.map(([, proc]) => proc.proc.pgid)), STOP_WAIT_MS);
      for (const node of this.nodes) bytes[node] = copyTree(this.dataDir(node), join(to, node));
    } finally {
      for (const [, proc] of running) signalGroupNow(proc.proc, 'SIGCONT');
    }
    return { pauseMs: performance.now() - begun, bytes, states };
  }

  /**
   * `copyDataDirs` for nodes on other hosts, one consistent cut too: every running node's group is
   * stopped, each data dir copied on its own host (in parallel, zeros left as holes), the groups
   * continued; only then are the copies archived, brought here into `<to>/<node>/` and removed
   * from the hosts. The pause is the signals' round trips and the copies on the hosts, not the
   * transfer. On this host it is `copyDataDirs`.
   */
  async copyHostDataDirs(to: string): Promise<DataDirsCopy> {
    if (!this.remote) return this.copyDataDirs(to);
    for (const node of this.nodes) await this.prepareHost(node);
    const running = [...this.procs.entries()]
      .filter(([node]) => this.statusOf(node) === 'running')
      .map(([, proc]) => proc);
    const states = this.nodeStates();
    const snapshot = (node: string): string => join(this.root, `.checkpoint-${node}`);
    const begun = performance.now();
    let pauseMs: number;
    try {
      await settleAll(running.map((p) => p.runtime.signal(p.proc, 'SIGSTOP')));
      // Each host copies once its node has stopped (a task in a write finishes it first).
      const stopped = (node: string): number[] =>
        this.statusOf(node) === 'running' ? [this.procs.get(node)?.proc.pgid ?? 0] : [];
      await settleAll(
        this.nodes.map((node) =>
          snapshotDir(this.runtimeOf(node), this.dataDir(node), snapshot(node), stopped(node)),
        ),
      );
    } finally {
      await settleAll(running.map((p) => p.runtime.signal(p.proc, 'SIGCONT')));
      pauseMs = performance.now() - begun;
    }
    const bytes: Record<string, number> = {};
    await settleAll(
      this.nodes.map(async (node) => {
        bytes[node] = await fetchSnapshot(this.runtimeOf(node), snapshot(node), join(to, node));
      }),
    );
    return { pauseMs, bytes, states };
  }

  /**
   * `restoreDataDirs` for nodes on other hosts: each node's data dir on its host becomes what
   * `<from>/<node>/` holds (staged here to move the paths text files name, then uploaded), before
   * the node first starts; the same path here holds it too, as `launch` reads it. On this host it
   * is `restoreDataDirs`.
   */
  async restoreHostDataDirs(from: string, states: readonly NodeState[]): Promise<void> {
    if (!this.remote) {
      this.restoreDataDirs(from, states);
      return;
    }
    if (this.procs.size > 0) throw new Error('restoreHostDataDirs: nodes are running');
    for (const state of states) {
      if (!this.nodes.includes(state.node)) throw new Error(`restoreHostDataDirs: no node ${state.node}`);
    }
    const staging = join(this.runDir, 'restoring');
    const id = this.registry.record({ kind: 'dir', path: staging });
    try {
      await settleAll(
        states.map(async (state) => {
          const dir = this.dataDir(state.node);
          const local = join(staging, state.node);
          copyTree(join(from, state.node), local);
          if (state.dataDir !== undefined && state.dataDir !== dir) relocateText(local, state.dataDir, dir);
          // `launch` runs here on the same path: it must see the restored files, or a config it
          // writes only when missing (Redis's) is written afresh and copied over the restored one.
          this.hostFiles?.wiped(state.node, dir);
          copyTree(local, dir);
          await this.prepareHost(state.node);
          const archive = join(this.root, `.restore-${state.node}.tar`);
          await uploadDir(this.runtimeOf(state.node), local, dir, archive);
        }),
      );
    } finally {
      this.registry.release(id);
    }
    for (const state of states) {
      this.setMember(state.node, state.member);
      if (state.joiner) this.joiners.add(state.node);
      else this.joiners.delete(state.node);
    }
  }

  /**
   * Before the first start: every node's data dir becomes a copy of `<from>/<node>/`, and each
   * node's membership and joiner flag what `states` say, so the nodes start where a checkpoint left
   * them (the caller starts the ones that were running). Text files that name the node's old data
   * dir (Redis keeps `dir …` in its redis.conf) name the new one.
   */
  restoreDataDirs(from: string, states: readonly NodeState[]): void {
    if (this.procs.size > 0) throw new Error('restoreDataDirs: nodes are running');
    if (this.remote)
      throw new Error('restoreDataDirs: nodes on other hosts are restored by restoreHostDataDirs');
    for (const state of states) {
      if (!this.nodes.includes(state.node)) throw new Error(`restoreDataDirs: no node ${state.node}`);
      const dir = this.dataDir(state.node);
      for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
      copyTree(join(from, state.node), dir);
      if (state.dataDir !== undefined && state.dataDir !== dir) relocateText(dir, state.dataDir, dir);
      this.setMember(state.node, state.member);
      if (state.joiner) this.joiners.add(state.node);
      else this.joiners.delete(state.node);
    }
  }

  /**
   * Polls the system until it serves requests, or the timeout passes. Each `ready()` call is
   * bounded by what is left of the timeout (at least `MIN_READY_CALL_MS`) and by `signal`: a call
   * that does not answer counts as not ready, saying so.
   */
  async waitReady(timeoutMs: number, signal?: AbortSignal, attempts?: ReadyAttempt[]): Promise<boolean> {
    const start = Date.now();
    const deadline = start + timeoutMs;
    while (Date.now() < deadline && !signal?.aborted) {
      const begun = Date.now();
      let attempt: ReadyAttempt;
      try {
        const budgetMs = Math.max(MIN_READY_CALL_MS, deadline - begun);
        const answer = await boundedReady(this.system, this, budgetMs, signal);
        const ready = isReady(answer);
        attempt = { atMs: begun - start, ms: Date.now() - begun, ready };
        if (typeof answer !== 'boolean') attempt = { ...attempt, checks: answer.checks };
      } catch (error) {
        // not ready yet
        const message = error instanceof Error ? error.message : String(error);
        attempt = { atMs: begun - start, ms: Date.now() - begun, ready: false, error: message };
        if (error instanceof ReadyDidNotAnswer) attempt = { ...attempt, unanswered: true };
      }
      attempts?.push(attempt);
      if (attempt.ready) return true;
      await sleep(READY_POLL_MS, signal);
    }
    return false;
  }

  /** Ends every node process (resuming paused ones first so they can die). */
  async close(): Promise<void> {
    const running = [...this.procs.keys()];
    await Promise.all(running.map((node) => this.kill(node, 'exited')));
    await Promise.all(this.streams.splice(0).map((s) => s.stop()));
    await this.disk?.close();
    await this.system.close?.();
  }
}
