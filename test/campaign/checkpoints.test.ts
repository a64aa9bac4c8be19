import { spawn } from 'node:child_process';
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
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Checkpoints, type CheckpointContext } from '../../src/campaign/checkpoints.js';
import { readCheckpoint } from '../../src/store/checkpoint-files.js';
import { Cluster } from '../../src/cluster/cluster.js';
import { noNetwork } from '../cluster/_helpers/no-network.js';
import { cleanupRegistries, ResourceRegistry } from '../../src/cluster/resources.js';
import type { LaunchOptions, SystemAdapter } from '../../src/systems/system.js';

const NODES = ['n1', 'n2', 'n3'];
const KIB = 1024;

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
  takenAtMs: 1234,
  network: { kind: 'proxy' },
  clockOffsetMs: (node) => (node === 'n2' ? 50 : 0),
};

/** The process state letter of /proc/PID/stat (`S` sleeping, `T` stopped). */
function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

describe('Checkpoints: every data dir at a schedule start, bounded', () => {
  let root: string;
  let registry: ResourceRegistry;
  let cluster: Cluster;
  const launches: [string, LaunchOptions][] = [];
  let seq = 0;

  const newCluster = (): Cluster =>
    new Cluster({
      system: sleepers(launches),
      nodes: NODES,
      runDir: root,
      runId: `cptest${process.pid}x${seq++}`,
      network: noNetwork,
      registry,
    });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-checkpoint-test-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`checkpoint-test-${process.pid}`, root);
    launches.length = 0;
    cluster = newCluster();
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

  it('copies every data dir with the nodes stopped, and continues them; the manifest says what a restart needs', async () => {
    for (const node of NODES) fill(node, 'log', 10 * KIB);
    await cluster.startAll();
    cluster.setMember('n3', false);
    const checkpoints = new Checkpoints(root, registry, { keep: 2, capBytes: 1024 ** 3 });
    checkpoints.take(0, cluster, CTX);
    const lookup = readCheckpoint(checkpoints.dirOf(0));
    expect(lookup.found).toBe(true);
    if (!lookup.found) return;
    expect(lookup.manifest).toMatchObject({
      version: 1,
      system: 'sleepers',
      schedule: 0,
      takenAtMs: 1234,
      bytes: 3 * 10 * KIB,
      network: { kind: 'proxy' },
    });
    expect(lookup.manifest.nodes.map((n) => n.dataDir)).toEqual(NODES.map((n) => cluster.dataDir(n)));
    expect(lookup.manifest.nodes.map(({ dataDir: _, ...n }) => n)).toEqual([
      { node: 'n1', status: 'running', member: true, joiner: false, bytes: 10 * KIB, clockOffsetMs: 0 },
      { node: 'n2', status: 'running', member: true, joiner: false, bytes: 10 * KIB, clockOffsetMs: 50 },
      { node: 'n3', status: 'running', member: false, joiner: false, bytes: 10 * KIB, clockOffsetMs: 0 },
    ]);
    expect(readFileSync(join(lookup.dir, 'n2', 'wal', 'log'))).toEqual(Buffer.alloc(10 * KIB, 7));
    // Continued after the copy, and still what the cluster says.
    for (const node of NODES) {
      expect(procState(cluster.pidOf(node)!)).not.toBe('T');
      expect(cluster.statusOf(node)).toBe('running');
    }
  });

  it('a cluster restored from it starts its nodes on the copies, joiners as joiners', async () => {
    fill('n1', 'log', KIB);
    await cluster.startAll();
    await cluster.kill('n3');
    await cluster.wipe('n3');
    fill('n3', 'joined', 2 * KIB);
    // A config that names its own data dir (Redis's `dir`), and a binary file that does too.
    const oldDir = cluster.dataDir('n1');
    writeFileSync(join(oldDir, 'redis.conf'), `port 1\ndir ${oldDir}\n`);
    writeFileSync(join(oldDir, 'dump.rdb'), Buffer.concat([Buffer.from([0, 1]), Buffer.from(oldDir)]));
    const checkpoints = new Checkpoints(root, registry, { keep: 2, capBytes: 1024 ** 3 });
    checkpoints.take(4, cluster, CTX);
    await cluster.close();
    const lookup = readCheckpoint(checkpoints.dirOf(4));
    if (!lookup.found) throw new Error(lookup.reason);

    const restored = newCluster();
    try {
      restored.restoreDataDirs(lookup.dir, lookup.manifest.nodes);
      expect(readdirSync(join(restored.dataDir('n3'), 'wal'))).toEqual(['joined']);
      expect(readdirSync(join(restored.dataDir('n1'), 'wal'))).toEqual(['log']);
      expect(restored.dataDir('n1')).not.toBe(oldDir);
      expect(readFileSync(join(restored.dataDir('n1'), 'redis.conf'), 'utf8')).toBe(
        `port 1\ndir ${restored.dataDir('n1')}\n`,
      );
      expect(
        readFileSync(join(restored.dataDir('n1'), 'dump.rdb'))
          .subarray(2)
          .toString(),
      ).toBe(oldDir);
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

  it('keeps the newest K and every bug schedule; past the cap it drops the oldest and says why', () => {
    fill('n1', 'log', 100 * KIB);
    const checkpoints = new Checkpoints(root, registry, { keep: 2, capBytes: 250 * KIB });
    checkpoints.take(0, cluster, CTX);
    checkpoints.keepForBug(0);
    checkpoints.take(1, cluster, CTX);
    expect(checkpoints.take(2, cluster, CTX)).toEqual([
      { schedule: 1, bytes: 100 * KIB, reason: 'over the cap of 250 KiB (--checkpoint-cap)' },
    ]);
    expect(checkpoints.take(3, cluster, CTX)).toEqual([
      { schedule: 2, bytes: 100 * KIB, reason: 'over the cap of 250 KiB (--checkpoint-cap)' },
    ]);
    checkpoints.keepForBug(3);
    // Only bug checkpoints left, and no room for the new one: the new one goes.
    expect(checkpoints.take(4, cluster, CTX)).toEqual([
      { schedule: 4, bytes: 100 * KIB, reason: 'over the cap of 250 KiB (--checkpoint-cap)' },
    ]);
    const summary = checkpoints.summary();
    expect(summary.kept.map((k) => [k.schedule, k.bug])).toEqual([
      [0, true],
      [3, true],
    ]);
    expect(summary.taken).toBe(5);
    expect(summary.bytesPerSchedule).toBe(100 * KIB);
    expect(readdirSync(join(root, 'checkpoints')).sort()).toEqual(['0', '3', 'index.json']);
    expect(readCheckpoint(checkpoints.dirOf(2))).toEqual({
      found: false,
      reason: `${checkpoints.dirOf(2)} was dropped: over the cap of 250 KiB (--checkpoint-cap)`,
    });

    const roomy = new Checkpoints(join(root, 'other'), registry, { keep: 1, capBytes: 1024 ** 3 });
    roomy.take(0, cluster, CTX);
    expect(roomy.take(1, cluster, CTX)).toEqual([
      { schedule: 0, bytes: 100 * KIB, reason: 'older than the newest 1 (--checkpoints)' },
    ]);
  });

  it('gives whole bytes per schedule, as results.json takes them, whatever the count', () => {
    const checkpoints = new Checkpoints(root, registry, { keep: 2, capBytes: 1024 ** 3 });
    fill('n1', 'log', 1000);
    checkpoints.take(0, cluster, CTX);
    fill('n1', 'log', 1001);
    checkpoints.take(1, cluster, CTX);
    expect(checkpoints.summary().bytesPerSchedule).toBe(1001);
  });

  it('a dir without its manifest, or with a manifest that is not one, is no checkpoint', () => {
    const dir = join(root, 'checkpoints', '7');
    mkdirSync(join(dir, 'n1'), { recursive: true });
    expect(readCheckpoint(dir)).toEqual({
      found: false,
      reason: `${dir} has no checkpoint.json (a copy that never finished)`,
    });
    writeFileSync(join(dir, 'checkpoint.json'), '{"version": 1}');
    expect(readCheckpoint(dir)).toEqual({
      found: false,
      reason: `${join(dir, 'checkpoint.json')} is not a checkpoint manifest`,
    });
  });
});

describe('a fuzzer killed in the middle of a checkpoint', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-checkpoint-kill-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('leaves no checkpoint, only a partial copy that cleanup removes with its nodes', async () => {
    const runDir = join(root, 'run');
    const state = join(root, 'state');
    mkdirSync(runDir);
    const env = { ...process.env, MALLORY_STATE_DIR: state };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '_fixtures', 'checkpoint-child.ts'), runDir, '200'],
      { env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const partialNode = join(runDir, 'checkpoints', '0.partial', 'n1');
    // Kill once the copy has begun, as soon as a first file of it exists.
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (existsSync(partialNode) && readdirSync(partialNode).length > 0) {
          clearInterval(poll);
          child.kill('SIGKILL');
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error(`the child ended before its copy began: ${out}`));
        }
      }, 2);
    });
    await new Promise((resolve) => child.once('exit', resolve));
    expect(out).not.toContain('done');
    const pids = out.trim().split(' ').slice(1).map(Number);
    expect(pids).toHaveLength(3);

    expect(existsSync(join(runDir, 'checkpoints', '0'))).toBe(false);
    expect(readCheckpoint(join(runDir, 'checkpoints', '0')).found).toBe(false);
    expect(readCheckpoint(join(runDir, 'checkpoints', '0.partial')).found).toBe(false);

    process.env.MALLORY_STATE_DIR = state;
    try {
      const report = cleanupRegistries();
      expect(report.runs).toHaveLength(1);
    } finally {
      delete process.env.MALLORY_STATE_DIR;
    }
    expect(existsSync(join(runDir, 'checkpoints', '0.partial'))).toBe(false);
    for (const pid of pids) expect(existsSync(`/proc/${pid}`) && procState(pid) !== 'Z').toBe(false);
  }, 60_000);
});
