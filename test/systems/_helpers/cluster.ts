import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Address } from '../../../src/cluster/net/backend.js';
import { NetnsBackend } from '../../../src/cluster/net/netns.js';
import { processStartTime, ResourceRegistry } from '../../../src/cluster/resources.js';
import type { ClusterView, SystemAdapter } from '../../../src/systems/system.js';

const SHM = '/dev/shm';

export const isRoot = process.getuid?.() === 0;

/** Why a real-system test cannot run here, or undefined when it can. */
export function skipReason(binaries: readonly string[]): string | undefined {
  if (!isRoot) return 'not root (the namespace backend needs CAP_NET_ADMIN)';
  for (const bin of binaries) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0) return `\`${bin}\` is not installed`;
  }
  return undefined;
}

export interface NodeExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A small stand-in for the campaign's cluster runtime, for adapter tests: real node processes in
 * their own namespaces, each in its own process group, killed by PID.
 */
export class TestCluster implements ClusterView {
  readonly runDir: string;
  members: string[];
  readonly lines = new Map<string, string[]>();
  readonly exits = new Map<string, NodeExit[]>();
  private readonly procs = new Map<string, { child: ChildProcess; id: number }>();

  private constructor(
    readonly nodes: readonly string[],
    readonly adapter: SystemAdapter,
    readonly net: NetnsBackend,
    readonly registry: ResourceRegistry,
    private readonly stateDir: string,
  ) {
    this.members = [...nodes];
    this.runDir = mkdtempSync(join(SHM, 'mallory-test-run-'));
    registry.record({ kind: 'dir', path: this.runDir });
  }

  static async create(adapter: SystemAdapter, nodes: readonly string[]): Promise<TestCluster> {
    const stateDir = mkdtempSync(join(tmpdir(), 'mallory-test-state-'));
    process.env.MALLORY_STATE_DIR = stateDir;
    const runId = `systest-${adapter.name}-${process.pid}-${Date.now()}`;
    const registry = new ResourceRegistry(runId, stateDir);
    const net = await NetnsBackend.create({
      runId,
      nodes,
      services: adapter.ports ?? {},
      peerServices: adapter.peerServices,
      registry,
    });
    const cluster = new TestCluster(nodes, adapter, net, registry, stateDir);
    await adapter.prepare?.(cluster);
    return cluster;
  }

  dataDir(node: string): string {
    return join(this.runDir, 'data', node);
  }
  listen(node: string, service: string): Address {
    return this.net.listen(node, service);
  }
  dial(from: string, to: string, service: string): Address {
    return this.net.dial(from, to, service);
  }
  clientAddress(node: string, service: string): Address {
    return this.net.clientAddress(node, service);
  }

  start(node: string, join = false): void {
    mkdirSync(this.dataDir(node), { recursive: true });
    const spec = this.adapter.launch(node, this, { join });
    const prefix = this.net.commandPrefix(node);
    const child = spawn(prefix[0], [...prefix.slice(1), spec.command, ...spec.args], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...spec.env },
    });
    const id = this.registry.record({
      kind: 'process',
      pid: child.pid!,
      startTime: processStartTime(child.pid!) ?? '',
      label: node,
    });
    const lines = this.lines.get(node) ?? [];
    this.lines.set(node, lines);
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream.on('data', (chunk: Buffer) => {
        const parts = (rest + chunk.toString()).split('\n');
        rest = parts.pop() ?? '';
        lines.push(...parts);
      });
    }
    child.once('exit', (code, signal) => {
      this.exits.set(node, [...(this.exits.get(node) ?? []), { code, signal }]);
    });
    this.procs.set(node, { child, id });
  }

  startAll(): void {
    for (const node of this.nodes) this.start(node);
  }

  async kill(node: string): Promise<void> {
    const proc = this.procs.get(node);
    if (!proc) return;
    this.procs.delete(node);
    const exited = new Promise((r) => proc.child.once('exit', r));
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      try {
        process.kill(-proc.child.pid!, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
      await exited;
    }
    this.registry.forget(proc.id);
  }

  signal(node: string, signal: 'SIGSTOP' | 'SIGCONT'): void {
    const proc = this.procs.get(node);
    if (proc) process.kill(-proc.child.pid!, signal);
  }

  wipe(node: string): void {
    rmSync(this.dataDir(node), { recursive: true, force: true });
  }

  async waitReady(timeoutMs: number): Promise<number> {
    const t0 = Date.now();
    while (Date.now() - t0 < timeoutMs) {
      if (await this.adapter.ready(this, AbortSignal.timeout(timeoutMs))) return Date.now() - t0;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${this.adapter.name} not ready after ${timeoutMs} ms; last lines:\n${this.tail()}`);
  }

  tail(count = 5): string {
    return [...this.lines.entries()].map(([n, l]) => `${n}: ${l.slice(-count).join(`\n${n}: `)}`).join('\n');
  }

  async close(): Promise<void> {
    for (const node of [...this.procs.keys()]) await this.kill(node);
    await this.adapter.close?.();
    await this.net.close();
    this.registry.releaseAll();
    rmSync(this.stateDir, { recursive: true, force: true });
    delete process.env.MALLORY_STATE_DIR;
  }
}

/** Polls `probe` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** Polls the adapter until it names a leader other than `old`. */
export function waitForNewLeader(
  adapter: SystemAdapter,
  cluster: ClusterView,
  old: string,
  timeoutMs: number,
  what = 'new leader',
): Promise<string> {
  return waitFor(
    async () => {
      const leader = await adapter.leadership!.leader(cluster);
      return leader !== undefined && leader !== old ? leader : undefined;
    },
    timeoutMs,
    what,
  );
}
