import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { Cluster, type NodeExit } from '../../src/cluster/cluster.js';
import { noNetwork } from './_helpers/no-network.js';
import type { NodeSystem, ReadyAttempt } from '../../src/cluster/node-system.js';
import { READY_ANSWER_GRACE_MS } from '../../src/cluster/_internals/bounded-ready.js';
import { ResourceRegistry } from '../../src/cluster/resources.js';
import { Rng } from '../../src/core/random.js';
import { Nemesis } from '../../src/nemesis/nemesis.js';
import type { LaunchOptions, SystemAdapter } from '../../src/systems/system.js';

const NODES = ['n1', 'n2', 'n3'];

/**
 * A system of `sleep` processes that remembers how each node was launched; `n1` may say something
 * and exit, or exit leaving a child of its own (its pid written to `childPidFile`) in its group.
 */
function sleepers(
  launches: [string, LaunchOptions][],
  n1Exits = false,
  childPidFile?: string,
): SystemAdapter {
  return {
    name: 'sleepers',
    services: ['client'],
    peerServices: [],
    membership: {
      add: () => Promise.resolve(),
      remove: () => Promise.resolve(),
    },
    crashPatterns: [],
    doctor: () => Promise.resolve([]),
    launch(node, _cluster, options) {
      launches.push([node, options]);
      if (node === 'n1' && childPidFile !== undefined) {
        return { command: 'sh', args: ['-c', `sleep 30 & echo $! > ${childPidFile}; exit 3`] };
      }
      return node === 'n1' && n1Exits
        ? { command: 'sh', args: ['-c', 'echo leaving >&2; exit 3'] }
        : { command: 'sleep', args: ['30'] };
    },
    ready: () => Promise.resolve(true),
    client: () => {
      throw new Error('no clients in this test');
    },
  };
}

describe('Cluster: how a node is launched', () => {
  let root: string;
  let registry: ResourceRegistry;
  let cluster: Cluster;
  const launches: [string, LaunchOptions][] = [];

  const exits: NodeExit[] = [];
  const create = (n1Exits = false, childPidFile?: string): Cluster =>
    new Cluster({
      system: sleepers(launches, n1Exits, childPidFile),
      nodes: NODES,
      runDir: root,
      runId: `clustertest${process.pid}`,
      network: noNetwork,
      registry,
      onExit: (e) => exits.push(e),
    });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-cluster-test-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`cluster-test-${process.pid}`, root);
    launches.length = 0;
    exits.length = 0;
    cluster = create();
  });

  afterEach(async () => {
    await cluster.close();
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  it('a node wiped since the bootstrap starts as a joiner, also when restarted after a kill', async () => {
    await cluster.startAll();
    await cluster.kill('n3', 'removed');
    await cluster.wipe('n3');
    await cluster.start('n3');
    await cluster.kill('n3');
    await cluster.start('n3');
    await cluster.kill('n1');
    await cluster.start('n1');

    expect(launches).toEqual([
      ['n1', { join: false }],
      ['n2', { join: false }],
      ['n3', { join: false }],
      ['n3', { join: true }],
      ['n3', { join: true }],
      ['n1', { join: false }],
    ]);
  });

  it('two starts of one node at once start one process: the second says the node is up', async () => {
    const outcomes = await Promise.all([cluster.start('n1'), cluster.start('n1')]);

    expect(outcomes).toEqual(['started', 'up']);
    expect(launches).toEqual([['n1', { join: false }]]);
    expect(await cluster.start('n1')).toBe('up');
    expect(launches).toHaveLength(1);
    const pid = cluster.pidOf('n1');
    expect(pid).toBeDefined();
    // The one process is the node's: a kill ends it, and nothing of n1 is left running.
    await cluster.kill('n1');
    expect(() => process.kill(pid!, 0)).toThrow();
    expect(exits.map((e) => [e.node, e.expected])).toEqual([['n1', true]]);
  });

  it('two heals racing after a kill start the killed node once', async () => {
    await cluster.startAll();
    await cluster.kill('n2');
    launches.length = 0;
    const nemesis = new Nemesis(cluster, noNetwork, sleepers([]), new Rng(1), ['kill']);

    const errors = await Promise.all([nemesis.healAll(), nemesis.healAll(), cluster.start('n2')]);

    expect(errors).toEqual([[], [], expect.stringMatching(/^(started|up)$/)]);
    expect(launches).toEqual([['n2', { join: false }]]);
    expect(cluster.nodesIn('running')).toEqual(NODES);
  });

  it('a kill while the node is being started kills the process that start makes', async () => {
    const [, killed] = await Promise.all([cluster.start('n1'), cluster.kill('n1')]);

    expect(killed).toBeUndefined();
    expect(cluster.statusOf('n1')).toBe('killed');
    expect(cluster.pidOf('n1')).toBeUndefined();
    expect(exits.map((e) => [e.node, e.expected])).toEqual([['n1', true]]);
  });

  it('restartFresh bootstraps every node again, joiners included', async () => {
    await cluster.startAll();
    await cluster.kill('n2', 'removed');
    await cluster.wipe('n2');
    launches.length = 0;

    await cluster.restartFresh();

    expect(launches).toEqual(NODES.map((n) => [n, { join: false }]));
  });

  it('an exit carries the sizes of the log files then: what that process wrote lies before them', async () => {
    await cluster.close();
    cluster = create(true);
    await cluster.start('n1');
    await vi.waitFor(() => {
      expect(exits).toHaveLength(1);
    });

    expect(exits[0]).toMatchObject({
      node: 'n1',
      code: 3,
      expected: false,
      logBytes: { 'stdout.log': 0, 'stderr.log': 'leaving\n'.length },
    });
  });

  it('a node whose process exits by itself takes the rest of its process group with it', async () => {
    const pidFile = join(root, 'child.pid');
    await cluster.close();
    cluster = create(false, pidFile);
    await cluster.start('n1');
    await vi.waitFor(() => {
      expect(exits).toHaveLength(1);
    });
    const child = Number(readFileSync(pidFile, 'utf8'));
    expect(child).toBeGreaterThan(0);
    await vi.waitFor(() => {
      expect(alive(child)).toBe(false);
    });
    expect(cluster.statusOf('n1')).toBe('exited');
  });
});

/** Whether a process of this pid exists (a zombie not yet reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** A cluster of sleepers on no network whose readiness is `ready`, for the waitReady cases. */
function readyCluster(
  root: string,
  registry: ResourceRegistry,
  runId: string,
  ready: NodeSystem['ready'],
): Cluster {
  return new Cluster({
    system: { ...sleepers([]), ready },
    nodes: NODES,
    runDir: root,
    runId,
    network: noNetwork,
    registry,
    onExit: () => undefined,
  });
}

describe('Cluster.waitReady: a ready() that retries until its signal aborts, then says why', () => {
  it('is an answer, with its checks, not a call that never answered', async () => {
    const root = mkdtempSync(join(tmpdir(), 'mallory-cluster-test-'));
    const registry = new ResourceRegistry(`cluster-ready-retry-${process.pid}`, root);
    // As kvraft's ready(): poll until the signal aborts, then answer what the last try saw.
    const cluster = readyCluster(root, registry, `clusterretry${process.pid}`, async (_view, signal) => {
      while (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
      return {
        ready: false,
        checks: [{ check: 'a leader', ok: false, detail: 'no node says it leads' }],
      };
    });
    try {
      const attempts: ReadyAttempt[] = [];
      expect(await cluster.waitReady(500, undefined, attempts)).toBe(false);
      expect(attempts.length).toBeGreaterThanOrEqual(1);
      expect(attempts[0].unanswered).toBeUndefined();
      expect(attempts[0].checks).toEqual([{ check: 'a leader', ok: false, detail: 'no node says it leads' }]);
    } finally {
      await cluster.close();
      registry.releaseAll();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('Cluster.waitReady: a ready() that never answers', () => {
  let root: string;
  let registry: ResourceRegistry;
  let cluster: Cluster;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-cluster-test-'));
    registry = new ResourceRegistry(`cluster-ready-test-${process.pid}`, root);
    cluster = readyCluster(
      root,
      registry,
      `clusterready${process.pid}`,
      () => new Promise<boolean>(() => undefined),
    );
  });

  afterEach(async () => {
    await cluster.close();
    registry.releaseAll();
    rmSync(root, { recursive: true, force: true });
  });

  it('counts as not ready once the wait is over, and says the call did not answer', async () => {
    const attempts: ReadyAttempt[] = [];
    const started = Date.now();

    const ready = await cluster.waitReady(1000, undefined, attempts);

    expect(ready).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000 + READY_ANSWER_GRACE_MS + 1500);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      ready: false,
      unanswered: true,
      error: 'ready() did not answer within 1 s',
    });
  });

  it('ends as soon as its signal aborts, the call still out', async () => {
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort();
    }, 200);
    const started = Date.now();

    const ready = await cluster.waitReady(60_000, controller.signal);

    expect(ready).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
