import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LIBFAKETIME_PATHS } from '../../src/cluster/clock-preload.js';
import { libfaketimeMissing } from '../../src/cluster/clock-preload.js';
import { run } from '../../src/core/exec.js';
import type { ClusterView } from '../../src/cluster/node-system.js';
import { nodeWallClockMs } from '../../src/systems/kvraft/index.js';
import { hostLeftovers, type SshHosts, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { BIN, disposeSandbox, mallory, REPO, type Sandbox, sandbox } from './helpers.js';

const unavailable = sshHostsUnavailable();
const HOSTS = 3;
const fixture = useSshHosts('e2eclock', { count: HOSTS });
const NODES = ['n1', 'n2', 'n3'];
/** kvraft's client service on every host (its first service: the run's fixed port base). */
const CLIENT_PORT = 7000;
const POLL_MS = 100;
/** How far a node's clock may sit from the offset set: a status round trip and a tick's write over SSH. */
const TOLERANCE_MS = 500;
const BUMP_MS = -60_000;
const STROBE_MS = 10_000;
const FAULTS_AT_MS = 1_000;
const RESET_AT_MS = 9_000;
const WAIT_MS = 120_000;
const LEFTOVER_WAIT_MS = 10_000;

/** The clock faults the runs enact, each on a node of its own. */
const SCHEDULE = [
  { atMs: FAULTS_AT_MS, f: 'bump-clock', value: { target: ['n1'], deltaMs: BUMP_MS } },
  { atMs: FAULTS_AT_MS, f: 'strobe-clock', value: { target: ['n2'], deltaMs: STROBE_MS, periodMs: 300 } },
  { atMs: FAULTS_AT_MS, f: 'drift-clock', value: { target: ['n3'], rate: 2 } },
  { atMs: RESET_AT_MS, f: 'reset-clock', value: 'all' },
];

/** The pids of a host's kvraft node processes, read from its namespace. */
async function nodePids(hosts: SshHosts, i: number): Promise<number[]> {
  const pids = (await run(['ip', 'netns', 'pids', hosts.namespace(i)])).stdout
    .split('\n')
    .filter((p) => p.trim() !== '');
  return pids.flatMap((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return cmd.includes('kvraft/node.js') ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

/** libfaketime's files in /dev/shm (the hosts share this machine's) named after one of `pids`. */
function faketimeFilesOf(pids: ReadonlySet<number>): string[] {
  return readdirSync('/dev/shm').filter((f) => {
    const match = /^(?:faketime_shm_|sem\.faketime_sem_)(\d+)$/.exec(f);
    return match !== null && pids.has(Number(match[1]));
  });
}

/** The dirs the runs under `store` left on the hosts (they share this machine's files). */
function hostRunDirs(store: string): string[] {
  if (!existsSync(store)) return [];
  return readdirSync(store, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('run.db') && !f.split('/').includes('latest'))
    .flatMap((f) => {
      const db = new Database(join(store, f), { readonly: true });
      try {
        return (db.prepare('SELECT id FROM run').all() as { id: string }[]).map((r) => r.id);
      } finally {
        db.close();
      }
    })
    .map((id) => join(tmpdir(), `mallory-${id}`))
    .filter((d) => existsSync(d));
}

describe.skipIf(unavailable !== undefined)(
  `mallory run --hosts --faults clock: kvraft on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    let schedule: string;
    const children: ChildProcess[] = [];
    const sshFlags = (): string[] => fixture.flags();
    /** The nodes' client addresses, as the run gives them: each host's own, on the fixed port. */
    const view = (): ClusterView => {
      const address = (node: string): { host: string; port: number } => ({
        host: fixture.hosts.addresses[NODES.indexOf(node)],
        port: CLIENT_PORT,
      });
      return {
        nodes: NODES,
        members: NODES,
        runDir: box.store,
        dataDir: () => box.store,
        listen: address,
        dial: (_from, to) => address(to),
        clientAddress: address,
      };
    };
    /** How far the node's wall clock (its status answer) is from ours, or undefined when it does not answer. */
    async function skewMs(node: string): Promise<number | undefined> {
      const before = Date.now();
      const theirs = await nodeWallClockMs(node, view(), 1_000).catch(() => undefined);
      const after = Date.now();
      return theirs === undefined ? undefined : theirs - (before + after) / 2;
    }
    /** What hosts hold besides their sshd, once that is nothing or after `LEFTOVER_WAIT_MS`. */
    async function settledLeftovers(): Promise<string[]> {
      const deadline = Date.now() + LEFTOVER_WAIT_MS;
      for (;;) {
        const found = (await Promise.all([0, 1, 2].map((i) => hostLeftovers(fixture.hosts, i)))).flat();
        if (found.length === 0 || Date.now() > deadline) return found;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    }
    function startRun(seed: number): {
      child: ChildProcess;
      stdout: () => string;
      stderr: () => string;
      exited: Promise<number | null>;
    } {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'run',
          ...sshFlags(),
          '--faults',
          'clock',
          '--schedule',
          schedule,
          '--steps',
          '12',
          '--step',
          '1s',
          '--time',
          '5m',
          '--seed',
          String(seed),
          '--store',
          box.store,
          '--json',
        ],
        { env: box.env, cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { child, stdout: () => stdout, stderr: () => stderr, exited };
    }

    beforeAll(() => {
      box = sandbox();
      schedule = join(box.store, '..', 'clock.jsonl');
      writeFileSync(schedule, SCHEDULE.map((l) => JSON.stringify(l)).join('\n') + '\n');
    });

    afterAll(async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      // What a failed test's runs left on the hosts, before the hosts go.
      await mallory(['cleanup'], box);
      disposeSandbox(box);
    });

    it("moves each node's wall clock on its host (bump, strobe, drift, reset) and leaves no control or libfaketime file there", async () => {
      const { stdout, stderr, exited } = startRun(11);
      const deadline = Date.now() + WAIT_MS;
      const pids = new Set<number>();
      const seenFiles = new Set<string>();
      const strobe: number[] = [];
      const drift: number[] = [];
      let bumped: number | undefined;
      let ended: number | null | undefined;
      void exited.then((code) => (ended = code));
      // Sampled while the run goes on: each node's clock through its own status answer.
      while (ended === undefined && Date.now() < deadline) {
        for (let i = 0; i < HOSTS; i++) for (const pid of await nodePids(fixture.hosts, i)) pids.add(pid);
        for (const f of faketimeFilesOf(pids)) seenFiles.add(f);
        const [n1, n2, n3] = await Promise.all(NODES.map((n) => skewMs(n)));
        if (n1 !== undefined && Math.abs(n1 - BUMP_MS) < TOLERANCE_MS) bumped = n1;
        if (n2 !== undefined) strobe.push(n2);
        if (n3 !== undefined) drift.push(n3);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      const code = await exited;
      expect(code, stderr()).toBe(0);

      expect(bumped, 'n1 never answered 60 s behind').toBeDefined();
      expect(strobe.some((s) => Math.abs(s - STROBE_MS) < TOLERANCE_MS)).toBe(true);
      expect(strobe.some((s) => Math.abs(s) < TOLERANCE_MS)).toBe(true);
      // Twice as fast for a few seconds: a second or more ahead at some point.
      expect(Math.max(...drift)).toBeGreaterThan(1_000);
      // libfaketime was loaded into every node on its host, and its files were named as looked for.
      expect(pids.size).toBeGreaterThanOrEqual(HOSTS);
      expect(seenFiles.size).toBeGreaterThanOrEqual(2 * HOSTS);

      const summary = JSON.parse(stdout()) as { runDir: string; status: string };
      expect(summary.status).toBe('complete');
      const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"nemesis"'))
        .map((l) => JSON.parse(l) as { f: string; time: number; error?: string });
      // Each fault is two lines: asked for, then done (with the nodes it acted on, or its error).
      const latencies = SCHEDULE.map((line) => {
        const [asked, done] = history.filter((op) => op.f === line.f);
        expect(done, `${line.f} was not enacted`).toBeDefined();
        expect(done?.error).toBeUndefined();
        return `${line.f} ${(((done?.time ?? 0) - (asked?.time ?? 0)) / 1e6).toFixed(1)} ms`;
      });
      process.stderr.write(`clock faults enacted over SSH: ${latencies.join(', ')}\n`);

      expect(await settledLeftovers()).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
      expect(faketimeFilesOf(pids)).toEqual([]);
    });

    it.each([
      ['SIGKILL', 'mallory cleanup removes the nodes and their libfaketime files', 12],
      ['SIGINT', "the run removes the nodes' libfaketime files and the control files", 13],
    ] as const)('after %s of the fuzzer with clocks moved, %s on the hosts', async (signal, _then, seed) => {
      const { child, stderr, exited } = startRun(seed);
      const pids = new Set<number>();
      const deadline = Date.now() + WAIT_MS;
      // Until n1's clock is moved: the nodes run with libfaketime loaded and a control file each.
      for (;;) {
        for (let i = 0; i < HOSTS; i++) for (const pid of await nodePids(fixture.hosts, i)) pids.add(pid);
        const n1 = await skewMs('n1');
        if (n1 !== undefined && Math.abs(n1 - BUMP_MS) < TOLERANCE_MS) break;
        if (Date.now() > deadline) throw new Error(`n1's clock was not moved: ${stderr()}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      expect(faketimeFilesOf(pids).length).toBeGreaterThanOrEqual(2 * HOSTS);
      expect(hostRunDirs(box.store).length).toBeGreaterThanOrEqual(1);
      child.kill(signal);
      if (signal === 'SIGINT') {
        expect(await exited, stderr()).toBe(130);
      } else {
        await exited;
        const cleanup = await mallory(['cleanup'], box);
        expect(cleanup.code, cleanup.stderr).toBe(0);
        expect(cleanup.stdout).toMatch(/libfaketime files of n\d \(pid \d+\) on /);
      }
      expect(await settledLeftovers()).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
      expect(faketimeFilesOf(pids)).toEqual([]);
    });

    it('replays on the hosts a bug whose schedule has clock faults', async () => {
      const store = join(box.store, 'replayed');
      const bugSchedule = join(box.store, '..', 'ack-with-clock.jsonl');
      writeFileSync(
        bugSchedule,
        [
          ...readFileSync(
            join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'ack-before-commit.jsonl'),
            'utf8',
          )
            .split('\n')
            .filter((l) => l.startsWith('{')),
          JSON.stringify({ atMs: 3_000, f: 'bump-clock', value: { target: ['n2'], deltaMs: 5_000 } }),
          JSON.stringify({ atMs: 11_000, f: 'reset-clock', value: 'all' }),
        ].join('\n') + '\n',
      );
      const found = await mallory(
        [
          'run',
          ...sshFlags(),
          '--bug',
          'ack-before-commit',
          '--schedule',
          bugSchedule,
          '--steps',
          '6',
          '--time',
          '5m',
          '--seed',
          '7',
          '--store',
          store,
          '--json',
        ],
        box,
      );
      expect(found.code, found.stderr).toBe(1);
      const bugDir = (JSON.parse(found.stdout) as { bugs: { dir: string }[] }).bugs[0].dir;
      expect(readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8')).toContain('"bump-clock"');

      const replay = await mallory(['replay', bugDir, '--repeat', '2', '--store', store, '--json'], box);
      expect(replay.stderr).toContain(`on hosts: ${fixture.hosts.addresses.join(', ')}`);
      const result = JSON.parse(replay.stdout) as { reproduced: number; tries: { runDir: string }[] };
      expect(result.tries).toHaveLength(2);
      expect(result.reproduced, replay.stderr).toBeGreaterThanOrEqual(1);
      for (const t of result.tries) {
        const db = new Database(join(t.runDir, 'run.db'), { readonly: true });
        const row = db.prepare('SELECT config FROM run').get() as { config: string };
        db.close();
        expect((JSON.parse(row.config) as { faults: string[] }).faults).toEqual(['partition', 'clock']);
        const bumps = readFileSync(join(t.runDir, 'history.jsonl'), 'utf8')
          .split('\n')
          .filter((l) => l.includes('"bump-clock"'))
          .map((l) => JSON.parse(l) as { value: unknown; error?: string });
        // Asked for, then done on n2.
        expect(bumps.at(-1)).toEqual(expect.objectContaining({ value: ['n2'] }));
        expect(bumps.at(-1)?.error).toBeUndefined();
      }
      expect(await settledLeftovers()).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
    });

    it('mallory doctor --hosts says where libfaketime is on each host', async () => {
      const result = await mallory(['doctor', ...sshFlags()], box);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const lines = result.stdout.split('\n').filter((l) => l.startsWith('ok '));
      expect(lines).toHaveLength(HOSTS);
      for (const line of lines)
        expect(line).toMatch(/libfaketime \/\S+\/libfaketime\.so\.1 \(clock faults\)/);
    });

    describe('a host without libfaketime', () => {
      // A host whose faketime package dirs are empty: no libfaketime there, whatever dpkg lists.
      const bare = useSshHosts('e2eclockbare', {
        count: 1,
        hidden: [...new Set(LIBFAKETIME_PATHS.map((p) => dirname(p)))].filter((d) => existsSync(d)),
      });

      it('refuses clock faults, in one line naming the host, on a host without libfaketime; doctor says it is missing for clock faults only', async () => {
        const address = bare.hosts.addresses[0];
        const refused = join(box.store, 'refused');
        const result = await mallory(
          ['run', ...bare.flags(), '--faults', 'kill,clock', '--time', '5s', '--store', refused],
          box,
        );
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toBe(`mallory: ${libfaketimeMissing(address)}\n`);
        expect(existsSync(refused)).toBe(false);

        const doctor = await mallory(['doctor', ...bare.flags()], box);
        expect(doctor.code, doctor.stdout).toBe(0);
        expect(doctor.stdout).toContain(`host ${address} (n1): `);
        expect(doctor.stdout).toContain(
          '— without: libfaketime (clock faults) (fix: apt-get install -y faketime)',
        );
      });
    });
  },
);
