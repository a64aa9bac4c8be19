import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hostLeftovers, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { disposeSandbox, jsonOf, mallory, REPO, type Sandbox, sandbox } from './helpers.js';

const HOSTS = 3;
const unavailable = sshHostsUnavailable();
// Each host has its own /tmp, so a data dir is here only if it was copied over SSH.
const fixture = useSshHosts('e2ehostckpt', { count: HOSTS, ownTmp: true });
const SCHEDULES = join(REPO, 'test', 'systems', 'kvraft', 'schedules');
/** Schedule 1 removes n3 (the reset adds it back, wiped, as a joiner); schedule 2 restarts it. */
const FIRST = join(SCHEDULES, 'rejoined-restart-assert.1.jsonl');
const SECOND = join(SCHEDULES, 'rejoined-restart-assert.2.jsonl');
const BUG = 'rejoined-restart-assert';
const REDIS_BINARIES = ['/usr/bin/redis-server', '/usr/bin/redis-sentinel'];

interface RunJson {
  readonly runDir: string;
  readonly bugs: readonly { readonly dir: string; readonly schedule: number; readonly kind: string }[];
  readonly checkpoints?: {
    readonly taken: number;
    readonly kept: readonly { readonly schedule: number; readonly bug: boolean; readonly bytes: number }[];
    readonly pauseMsMedian: number | null;
  };
}

interface ReplayJson {
  readonly start: { readonly kind: string; readonly dir?: string; readonly schedule?: number };
  readonly reproduced: number;
  readonly tries: readonly { readonly runDir: string }[];
}

/** The run's id, from its results. */
const runIdOf = (runDir: string): string =>
  (JSON.parse(readFileSync(join(runDir, 'results.json'), 'utf8')) as { run: { id: string } }).run.id;

describe.skipIf(unavailable !== undefined)(
  `checkpoints of kvraft nodes on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    const sshFlags = (): string[] => fixture.flags();
    /** Nothing of the runs on any host (processes, rules, files in its /tmp), nor their dirs' copies here. */
    const clean = async (runDirs: readonly string[]): Promise<void> => {
      for (let i = 0; i < HOSTS; i++)
        expect(await hostLeftovers(fixture.hosts, i, { files: true })).toEqual([]);
      for (const dir of runDirs) expect(existsSync(join(tmpdir(), `mallory-${runIdOf(dir)}`))).toBe(false);
    };

    beforeAll(async () => {
      box = sandbox();
      for (let i = 0; i < HOSTS; i++)
        expect(await hostLeftovers(fixture.hosts, i, { files: true })).toEqual([]);
    });

    afterAll(async () => {
      // What a failed test's runs left on the hosts, before the hosts go.
      await mallory(['cleanup'], box);
      disposeSandbox(box);
    });

    it("takes a checkpoint of every node's data dir at each schedule's start, and a replay of the bug restores it on the hosts", async () => {
      const common = ['--steps', '3', '--time', '5m', '--seed', '3', '--store', box.store];
      // No --checkpoints: hosts take them by default, as local runs do.
      const run = await mallory(
        ['run', ...sshFlags(), '--bug', BUG, '--schedule', FIRST, '--schedule', SECOND, ...common, '--json'],
        box,
      );
      expect(run.code, run.stderr).toBe(1);
      const summary = jsonOf(run) as RunJson;
      const bug = summary.bugs.find((b) => b.kind === 'crash');
      expect(bug, JSON.stringify(summary.bugs)).toBeDefined();
      expect(bug?.schedule).toBe(1);
      expect(summary.checkpoints?.taken).toBe(2);
      expect(summary.checkpoints?.kept.find((k) => k.schedule === 1)?.bug).toBe(true);
      expect(summary.checkpoints?.pauseMsMedian).toBeGreaterThan(0);
      const checkpointDir = join(summary.runDir, 'checkpoints', '1');
      // In the local run dir, whole (its manifest written last), with each node's data from its host.
      expect(readdirSync(checkpointDir).sort()).toEqual(['checkpoint.json', 'n1', 'n2', 'n3']);
      expect(readdirSync(join(summary.runDir, 'checkpoints')).filter((f) => f.endsWith('.partial'))).toEqual(
        [],
      );
      const manifest = JSON.parse(readFileSync(join(checkpointDir, 'checkpoint.json'), 'utf8')) as {
        bytes: number;
        nodes: { node: string; joiner: boolean; bytes: number; dataDir: string }[];
      };
      expect(manifest.bytes).toBeGreaterThan(0);
      // Schedule 1's reset added n3 back, wiped, as a joiner: the checkpoint keeps that.
      expect(manifest.nodes.find((n) => n.node === 'n3')?.joiner).toBe(true);
      for (const n of manifest.nodes) {
        expect(n.dataDir).toBe(`/tmp/mallory-${runIdOf(summary.runDir)}/${n.node}`);
        expect(n.bytes, n.node).toBeGreaterThan(0);
        // A joiner may be caught installing the leader's snapshot, written as snapshot.json.tmp
        // and renamed, and it writes meta.json only once it has heard the leader's term: the copy
        // holds what its host held at the cut, which of these it had.
        const files = readdirSync(join(checkpointDir, n.node)).map((f) =>
          n.joiner ? f.replace(/^snapshot\.json\.tmp$/, 'snapshot.json') : f,
        );
        const held = [...new Set(files)].sort();
        expect(held, n.node).toEqual([
          'log.jsonl',
          ...(n.joiner && !held.includes('meta.json') ? [] : ['meta.json']),
          'snapshot.json',
        ]);
        // kvraft's Raft log as the node wrote it on its host, from its last compaction (the
        // joiner's is still empty).
        if (!n.joiner) {
          expect(readFileSync(join(checkpointDir, n.node, 'log.jsonl'), 'utf8')).toMatch(
            /^\{"index":\d+,"term":\d+,/,
          );
        }
      }
      await clean([summary.runDir]);

      const bugDir = bug!.dir;
      const fromCheckpoint = await mallory(
        ['replay', bugDir, '--repeat', '2', '--store', box.store, '--json'],
        box,
      );
      const replayed = jsonOf(fromCheckpoint) as ReplayJson;
      expect(replayed.start).toEqual({ kind: 'checkpoint', dir: resolve(checkpointDir), schedule: 1 });
      expect(fromCheckpoint.stderr).toContain(
        `start: from the checkpoint of schedule 2 (${resolve(checkpointDir)})`,
      );
      expect(fromCheckpoint.stderr).toContain(`on hosts: ${fixture.hosts.addresses.join(', ')}`);
      // The bug needs what schedule 1 left (n3 a joiner with a stored configuration): it comes back
      // only on the restored data dirs.
      expect(replayed.reproduced, fromCheckpoint.stderr).toBeGreaterThanOrEqual(1);

      const fresh = await mallory(
        ['replay', bugDir, '--repeat', '1', '--fresh', '--store', box.store, '--json'],
        box,
      );
      const freshly = jsonOf(fresh) as ReplayJson;
      expect(freshly.start.kind).toBe('fresh');
      expect(freshly.reproduced, fresh.stderr).toBe(0);
      await clean([...replayed.tries, ...freshly.tries].map((t) => t.runDir));
    }, 900_000);

    it.skipIf(!REDIS_BINARIES.every((b) => existsSync(b)))(
      "a run started from a checkpoint on hosts keeps the restored config a system writes only when it is missing (redis's redis.conf)",
      async () => {
        // One short schedule each (a pause of one node): a run needs only its first checkpoint,
        // taken at that schedule's start, however long the cluster takes to start.
        const schedule = join(box.store, '..', 'redis-pause.jsonl');
        writeFileSync(schedule, JSON.stringify({ atMs: 500, f: 'pause', value: 'one' }) + '\n');
        const common = [
          '--system',
          'redis',
          '--faults',
          'pause',
          '--schedule',
          schedule,
          '--steps',
          '2',
          '--step',
          '1s',
          '--time',
          '5m',
          '--seed',
          '2',
        ];
        const store = join(box.store, 'redis');
        const first = await mallory(['run', ...sshFlags(), ...common, '--store', store, '--json'], box);
        const firstDir = (jsonOf(first) as RunJson).runDir;
        const checkpoint = join(firstDir, 'checkpoints', '0');
        expect(existsSync(join(checkpoint, 'checkpoint.json')), first.stderr).toBe(true);
        // A line the launch would not write: the host's file after the restore is the checkpoint's.
        appendFileSync(join(checkpoint, 'n1', 'redis.conf'), '# from the checkpoint\n');

        const second = await mallory(
          ['run', ...sshFlags(), ...common, '--from-checkpoint', checkpoint, '--store', store, '--json'],
          box,
        );
        const secondDir = (jsonOf(second) as RunJson).runDir;
        // The second run's own first checkpoint is what n1's host held once it was serving.
        const onHost = readFileSync(join(secondDir, 'checkpoints', '0', 'n1', 'redis.conf'), 'utf8');
        expect(onHost).toContain('# from the checkpoint');
        expect(onHost).toContain(`dir /tmp/mallory-${runIdOf(secondDir)}/n1`);
        await clean([firstDir, secondDir]);
      },
      600_000,
    );
  },
);
