import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Cluster, type ClusterOptions, type NodeExit } from '../../../src/cluster/cluster.js';
import type { NetworkBackend } from '../../../src/cluster/net/backend.js';
import { NetnsBackend } from '../../../src/cluster/net/netns.js';
import { ProxyBackend } from '../../../src/cluster/net/proxy.js';
import { ResourceRegistry } from '../../../src/cluster/resources.js';
import type { ClusterView, NodeSystem, SystemAdapter } from '../../../src/systems/system.js';

export const isRoot = process.getuid?.() === 0;

/** Why a real-system test cannot run here, or undefined when it can. */
export function skipReason(binaries: readonly string[]): string | undefined {
  if (!isRoot) return 'not root (the namespace backend needs CAP_NET_ADMIN)';
  for (const bin of binaries) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0) return `\`${bin}\` is not installed`;
  }
  return undefined;
}

export interface TestClusterOptions {
  /** `netns` (the default; needs root) or `proxy`: the loopback proxies a run without root uses. */
  readonly network?: 'netns' | 'proxy';
  /** What launches the nodes, when a test adds to the adapter's launch (per-node flags). */
  readonly system?: NodeSystem;
}

/**
 * The campaign's own cluster runtime (`Cluster`: node processes in their own process groups, killed
 * by PID, output under `<runDir>/nodes/<n>/`) on one of the run's network backends, for adapter
 * tests, with what the tests look at: each node's output lines and exits.
 */
export class TestCluster extends Cluster {
  readonly exits = new Map<string, NodeExit[]>();

  private constructor(
    options: ClusterOptions,
    readonly adapter: SystemAdapter,
    readonly net: NetworkBackend,
    private readonly resources: ResourceRegistry,
    private readonly stateDir: string,
  ) {
    super(options);
  }

  static async create(
    adapter: SystemAdapter,
    nodes: readonly string[],
    options: TestClusterOptions = {},
  ): Promise<TestCluster> {
    const stateDir = mkdtempSync(join(tmpdir(), 'mallory-test-state-'));
    process.env.MALLORY_STATE_DIR = stateDir;
    const runId = `systest-${adapter.name}-${process.pid}-${Date.now()}`;
    const registry = new ResourceRegistry(runId, stateDir);
    const runDir = mkdtempSync(join(tmpdir(), 'mallory-test-run-'));
    registry.record({ kind: 'dir', path: runDir });
    const net: NetworkBackend =
      options.network === 'proxy'
        ? await ProxyBackend.create({
            nodes,
            services: adapter.services,
            peerServices: adapter.peerServices,
            seed: 1,
          })
        : await NetnsBackend.create({
            runId,
            nodes,
            services: adapter.ports ?? {},
            peerServices: adapter.peerServices,
            registry,
          });
    // Nodes exit only once the cluster exists and runs them.
    let cluster: TestCluster | undefined = undefined;
    const onExit = (exit: NodeExit): void => {
      const exits = cluster!.exits;
      exits.set(exit.node, [...(exits.get(exit.node) ?? []), exit]);
    };
    cluster = new TestCluster(
      { system: options.system ?? adapter, nodes, runDir, runId, network: net, registry, onExit },
      adapter,
      net,
      registry,
      stateDir,
    );
    return cluster;
  }

  /** Which nodes the system counts as members (tests set it as they remove and add nodes). */
  override get members(): readonly string[] {
    return super.members;
  }
  override set members(nodes: readonly string[]) {
    for (const node of this.nodes) this.setMember(node, nodes.includes(node));
  }

  /** Every line the node has written to stdout and stderr so far (stdout's first). */
  lines(node: string): string[] {
    return ['stdout.log', 'stderr.log'].flatMap((file) => {
      try {
        return readFileSync(join(this.logDir(node), file), 'utf8')
          .split('\n')
          .filter((l) => l !== '');
      } catch {
        return [];
      }
    });
  }

  /** Waits until the system serves requests; throws with the nodes' last lines if it does not. */
  async untilReady(timeoutMs: number): Promise<number> {
    const t0 = Date.now();
    if (await this.waitReady(timeoutMs)) return Date.now() - t0;
    // A node that exited says why in its first error line, which its last lines (a usage text
    // printed after the error, say) may no longer show.
    const exited = [...this.exits].map(([node, exits]) => {
      const last = exits[exits.length - 1];
      const why = this.lines(node).find((l) => /error|fatal|panic/i.test(l)) ?? '(no error line)';
      return `${node} exited (${last.signal ?? `code ${last.code}`}): ${why}\n`;
    });
    throw new Error(
      `${this.adapter.name} not ready after ${timeoutMs} ms; ${exited.join('')}last lines:\n${this.tail()}`,
    );
  }

  tail(count = 5): string {
    return this.nodes.map((n) => `${n}: ${this.lines(n).slice(-count).join(`\n${n}: `)}`).join('\n');
  }

  override async close(): Promise<void> {
    await super.close();
    await this.net.close();
    this.resources.releaseAll();
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
