import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Checkpoints, type CheckpointContext } from '../../src/campaign/checkpoints.js';
import { Cluster, type HostLayout } from '../../src/cluster/cluster.js';
import { ResourceRegistry } from '../../src/cluster/resources.js';
import { LOCAL_CAPABILITIES, LocalRuntime } from '../../src/cluster/runtime/local.js';
import type { ExecResult } from '../../src/cluster/runtime/runtime.js';
import { readCheckpoint } from '../../src/store/checkpoint-files.js';
import type { LaunchOptions, SystemAdapter } from '../../src/systems/system.js';
import { noNetwork } from '../cluster/_helpers/no-network.js';
import { mkdirOn } from '../../src/cluster/runtime/files.js';

const NODES = ['n1', 'n2', 'n3'];
const KIB = 1024;
const STOPPED_WITHIN_MS = 2000;
const POLL_MS = 10;

/** Nodes that are `sleep` processes, and how each was launched. */
function sleepers(launches: [string, LaunchOptions][]): SystemAdapter {
  return {
    name: 'sleepers',
    services: ['client'],
    peerServices: [],
    crashPatterns: [],
    doctor: () => Promise.resolve([]),
    launch(node, _cluster, options) {
      launches.push([node, options]);
      return { command: 'sleep', args: ['30'] };
    },
    ready: () => Promise.resolve(true),
    client: () => {
      throw new Error('no clients in this test');
    },
  };
}

const CTX: CheckpointContext = {
  system: 'sleepers',
  keysFrom: 0,
  takenAtMs: 10,
  network: { kind: 'proxy' },
  clockOffsetMs: () => 0,
};

/** The process state letter of /proc/PID/stat (`S` sleeping, `T` stopped). */
function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/**
 * This machine as the nodes' "host": the runtime the SSH one stands in for, real processes and
 * files, which notes the nodes' states whenever it copies a data dir and can be made to lose the
 * connection (its reads fail) partway.
 */
class WatchedHost extends LocalRuntime {
  /** Stands in for a host whose files are its own (the cluster streams and copies them). */
  override readonly capabilities = { ...LOCAL_CAPABILITIES, sharedFilesystem: false };
  readonly statesAtCopy: string[][] = [];
  pids: () => number[] = () => [];
  failReadsAfter = Infinity;
  private reads = 0;

  /**
   * A stop signal is taken when its process next runs: a copy waits (up to `STOPPED_WITHIN_MS`)
   * for the nodes to show as stopped before it notes their states. Nodes never signalled to stop
   * stay running, and say so.
   */
  override async exec(
    argv: readonly string[],
    options?: { readonly timeoutMs?: number },
  ): Promise<ExecResult> {
    if (argv.some((a) => a.includes('cp -a'))) {
      const deadline = Date.now() + STOPPED_WITHIN_MS;
      while (this.pids().some((pid) => procState(pid) !== 'T') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      this.statesAtCopy.push(this.pids().map(procState));
    }
    return super.exec(argv, options);
  }

  override get(path: string): Promise<Buffer> {
    if (++this.reads > this.failReadsAfter) return Promise.reject(new Error('connection lost'));
    return super.get(path);
  }
}

describe('Checkpoints of nodes on other hosts: archived there, brought here, put back', () => {
  let root: string;
  let registry: ResourceRegistry;
  let host: WatchedHost;
  let cluster: Cluster;
  const launches: [string, LaunchOptions][] = [];
  let seq = 0;

  const newCluster = (): Cluster => {
    const hostRoot = join(root, 'host', `run${seq}`);
    const layout: HostLayout = {
      runtimeOf: () => host,
      root: hostRoot,
      streamed: [],
      prepareHost: () => mkdirOn(host, hostRoot),
    };
    return new Cluster({
      system: sleepers(launches),
      nodes: NODES,
      runDir: join(root, 'runs', String(seq)),
      runId: `cphtest${process.pid}x${seq++}`,
      network: noNetwork,
      registry,
      layout,
    });
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-checkpoint-hosts-test-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`checkpoint-hosts-test-${process.pid}`, root);
    launches.length = 0;
    host = new WatchedHost();
    cluster = newCluster();
    host.pids = () => NODES.flatMap((n) => cluster.pidOf(n) ?? []);
  });

  afterEach(async () => {
    await cluster.close();
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  const fill = (node: string, name: string, bytes: number): void => {
    mkdirSync(join(cluster.dataDir(node), 'wal'), { recursive: true });
    writeFileSync(join(cluster.dataDir(node), 'wal', name), Buffer.alloc(bytes, 7));
  };

  it('archives every data dir with the nodes stopped, continues them, and brings the copies into the local checkpoint', async () => {
    await cluster.startAll();
    for (const node of NODES) fill(node, 'log', 10 * KIB);
    const checkpoints = new Checkpoints(join(root, 'local-run'), registry, { keep: 2, capBytes: 1024 ** 3 });

    await checkpoints.takeFromHosts(0, cluster, CTX);

    // Every copy on the host was made with every node stopped.
    expect(host.statesAtCopy).toHaveLength(NODES.length);
    for (const states of host.statesAtCopy) expect(states).toEqual(['T', 'T', 'T']);
    for (const node of NODES) {
      expect(procState(cluster.pidOf(node)!)).not.toBe('T');
      expect(cluster.statusOf(node)).toBe('running');
    }
    const lookup = readCheckpoint(checkpoints.dirOf(0));
    if (!lookup.found) throw new Error(lookup.reason);
    expect(lookup.manifest.bytes).toBe(3 * 10 * KIB);
    expect(lookup.manifest.pauseMs).toBeGreaterThan(0);
    expect(lookup.manifest.nodes.map((n) => [n.node, n.bytes, n.dataDir])).toEqual(
      NODES.map((n) => [n, 10 * KIB, cluster.dataDir(n)]),
    );
    expect(readFileSync(join(lookup.dir, 'n2', 'wal', 'log'))).toEqual(Buffer.alloc(10 * KIB, 7));
    // No copy or archive left on the host nor here.
    expect(readdirSync(dirname(cluster.dataDir('n1'))).sort()).toEqual(['n1', 'n2', 'n3', 'nodes']);
    expect(readdirSync(lookup.dir).sort()).toEqual(['checkpoint.json', 'n1', 'n2', 'n3']);
  });

  it('leaves no checkpoint when the copy breaks off, only a partial dir the registry removes, and the nodes running', async () => {
    await cluster.startAll();
    for (const node of NODES) fill(node, 'log', KIB);
    const runDir = join(root, 'local-run');
    const checkpoints = new Checkpoints(runDir, registry, { keep: 2, capBytes: 1024 ** 3 });
    host.failReadsAfter = 1;

    await expect(checkpoints.takeFromHosts(3, cluster, CTX)).rejects.toThrow('connection lost');

    expect(readCheckpoint(checkpoints.dirOf(3)).found).toBe(false);
    expect(existsSync(join(runDir, 'checkpoints', '3.partial'))).toBe(true);
    for (const node of NODES) expect(procState(cluster.pidOf(node)!)).not.toBe('T');
    registry.releaseAll();
    expect(readdirSync(join(runDir, 'checkpoints'))).toEqual([]);
  });

  it("a cluster restored from it has each host's data dir replaced by the copy before its nodes start, joiners as joiners", async () => {
    fill('n1', 'log', KIB);
    await cluster.startAll();
    await cluster.kill('n3');
    await cluster.wipe('n3');
    fill('n3', 'joined', 2 * KIB);
    const oldDir = cluster.dataDir('n1');
    writeFileSync(join(oldDir, 'redis.conf'), `dir ${oldDir}\n`);
    const checkpoints = new Checkpoints(join(root, 'local-run'), registry, { keep: 2, capBytes: 1024 ** 3 });
    await checkpoints.takeFromHosts(1, cluster, CTX);
    await cluster.close();
    const lookup = readCheckpoint(checkpoints.dirOf(1));
    if (!lookup.found) throw new Error(lookup.reason);

    const restored = newCluster();
    try {
      // What the new run's host held before is replaced.
      mkdirSync(restored.dataDir('n2'), { recursive: true });
      writeFileSync(join(restored.dataDir('n2'), 'stale'), 'x');
      await restored.restoreHostDataDirs(lookup.dir, lookup.manifest.nodes);
      expect(readdirSync(restored.dataDir('n2'))).toEqual([]);
      expect(readdirSync(join(restored.dataDir('n3'), 'wal'))).toEqual(['joined']);
      expect(readFileSync(join(restored.dataDir('n1'), 'wal', 'log'))).toEqual(Buffer.alloc(KIB, 7));
      expect(restored.dataDir('n1')).not.toBe(oldDir);
      expect(readFileSync(join(restored.dataDir('n1'), 'redis.conf'), 'utf8')).toBe(
        `dir ${restored.dataDir('n1')}\n`,
      );
      // The staging dir here and the archives on the host are gone.
      expect(readdirSync(restored.runDir)).toEqual(['nodes']);
      expect(readdirSync(dirname(restored.dataDir('n1'))).sort()).toEqual(['n1', 'n2', 'n3', 'nodes']);
      launches.length = 0;
      await restored.startAll();
      expect(launches).toEqual([
        ['n1', { join: false }],
        ['n2', { join: false }],
        ['n3', { join: true }],
      ]);
    } finally {
      await restored.close();
    }
  });
});
