import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../src/core/exec.js';
import { hostLeftovers, type SshHosts, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { BIN, disposeSandbox, mallory, REPO, type Sandbox, sandbox } from './helpers.js';

const unavailable = sshHostsUnavailable();
const HOSTS = 3;

/** What host i holds besides its sshd. */
const leftoversOn = (hosts: SshHosts, i: number): Promise<string[]> => hostLeftovers(hosts, i);

/** The ids of the runs under `store` (each run's `run.db`), the fuzzer's own included when it was killed. */
function runIds(store: string): string[] {
  if (!existsSync(store)) return [];
  const ids = readdirSync(store, { recursive: true, encoding: 'utf8' })
    // `latest` links to a run listed already.
    .filter((f) => f.endsWith('run.db') && !f.split('/').includes('latest'))
    .flatMap((f) => {
      const db = new Database(join(store, f), { readonly: true });
      try {
        return (db.prepare('SELECT id FROM run').all() as { id: string }[]).map((r) => r.id);
      } finally {
        db.close();
      }
    });
  return [...new Set(ids)];
}

/**
 * The dirs the runs under `store` left on the hosts (which share this machine's files):
 * `/tmp/mallory-<run>`. Only this file's runs: other files' runs on hosts may be going on.
 */
function hostRunDirs(store: string): string[] {
  return runIds(store)
    .map((id) => join(tmpdir(), `mallory-${id}`))
    .filter((d) => existsSync(d));
}

describe.skipIf(unavailable !== undefined)(
  `mallory run --hosts: kvraft on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    const fixture = useSshHosts('e2ehosts');
    let hosts: SshHosts;
    const sshFlags = (): string[] => fixture.flags();

    beforeAll(() => {
      box = sandbox();
      hosts = fixture.hosts;
    });

    /** The fuzzers the tests started themselves: a failed test's is ended here. */
    const children: ChildProcess[] = [];
    // Runs before the hosts go (after-hooks run in reverse).
    afterAll(async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      // What a failed test's run left (its nodes on the hosts), before the hosts go.
      await mallory(['cleanup'], box);
      disposeSandbox(box);
    });

    it('runs a campaign with partitions, kills and pauses enacted over SSH, and leaves nothing on any host', async () => {
      const result = await mallory(
        [
          'run',
          ...sshFlags(),
          // The families this test checks (the default on hosts has member too).
          '--faults',
          'partition,kill,pause',
          '--time',
          '25s',
          '--steps',
          '4',
          '--step',
          '1s',
          '--seed',
          '7',
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(result.stderr).not.toMatch(/Error:/);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as { runDir: string; status: string };
      expect(summary.status).toBe('complete');
      const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8');
      const faults = new Set(
        history
          .split('\n')
          .filter((l) => l.includes('"nemesis"'))
          .map((l) => (JSON.parse(l) as { f: string }).f),
      );
      expect([...faults].filter((f) => ['start-partition', 'kill', 'pause'].includes(f)).sort()).toEqual([
        'kill',
        'pause',
        'start-partition',
      ]);
      expect(history).toMatch(/"type":"ok"/);
      // The nodes' output came back over SSH: the log-based observation read it.
      for (const node of ['n1', 'n2', 'n3']) {
        expect(
          readFileSync(join(summary.runDir, 'nodes', node, 'probe.jsonl'), 'utf8').length,
        ).toBeGreaterThan(0);
      }
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
    });

    it("runs a campaign on the hosts from code: the package's run() with hosts, key and known_hosts in its config", async () => {
      // As a user's script would: `import { run } from 'mallory'` (the package's own entry, built).
      const store = join(box.store, 'from-code');
      const config = {
        system: 'kvraft',
        hosts: hosts.addresses.map((host) => ({ host })),
        sshPrivateKey: hosts.privateKey,
        knownHosts: hosts.knownHosts,
        faults: ['partition', 'kill'],
        timeMs: 15_000,
        steps: 4,
        stepMs: 1_000,
        seed: 5,
        store,
      };
      const script = [
        "import { run } from 'mallory';",
        `const summary = await run(${JSON.stringify(config)});`,
        'process.stdout.write(JSON.stringify({ status: summary.status, runDir: summary.runDir }));',
      ].join('\n');
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        env: box.env,
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code, stderr).toBe(0);
      const summary = JSON.parse(stdout) as { status: string; runDir: string };
      expect(summary.status).toBe('complete');
      // Its nodes ran on the hosts: each node's address in the run's config is its host's.
      const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
      const row = db.prepare('SELECT config FROM run').get() as { config: string };
      db.close();
      expect((JSON.parse(row.config) as { hosts: { host: string }[] }).hosts.map((h) => h.host)).toEqual(
        hosts.addresses,
      );
      // Each node listened on its host's address (its log, streamed back over SSH, says so).
      hosts.addresses.forEach((address, i) => {
        expect(readFileSync(join(summary.runDir, 'nodes', `n${i + 1}`, 'stdout.log'), 'utf8')).toContain(
          `started: client ${address}:`,
        );
      });
      const nemesis = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"nemesis"'));
      expect(nemesis.length).toBeGreaterThan(0);
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
      expect(hostRunDirs(store)).toEqual([]);
    });

    it('keeps the hosts in the record of a bug found over SSH, and replays it on them', async () => {
      const schedule = join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'ack-before-commit.jsonl');
      const store = join(box.store, 'replayed');
      const found = await mallory(
        [
          'run',
          ...sshFlags(),
          '--bug',
          'ack-before-commit',
          '--schedule',
          schedule,
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
      const header = (
        JSON.parse(readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8').split('\n')[0]) as {
          mallory: { hosts?: unknown };
        }
      ).mallory;
      expect(header.hosts).toEqual({
        hosts: hosts.addresses.map((host) => ({ host })),
        sshUsername: 'root',
        sshPort: 22,
        sshPrivateKey: hosts.privateKey,
        strictHostKeyChecking: 'yes',
        knownHosts: hosts.knownHosts,
      });

      const replay = await mallory(['replay', bugDir, '--repeat', '2', '--store', store, '--json'], box);
      expect(replay.stderr).toContain(`on hosts: ${hosts.addresses.join(', ')}`);
      const result = JSON.parse(replay.stdout) as {
        reproduced: number;
        tries: { runDir: string; reproduced: boolean }[];
      };
      expect(result.tries).toHaveLength(2);
      expect(result.reproduced, replay.stderr).toBeGreaterThanOrEqual(1);
      expect(replay.code).toBe(1);
      for (const t of result.tries) {
        // Each try's nodes ran on the hosts: its configuration names them, and its output came back.
        const db = new Database(join(t.runDir, 'run.db'), { readonly: true });
        const row = db.prepare('SELECT config FROM run').get() as { config: string };
        db.close();
        const config = JSON.parse(row.config) as { hosts?: { host: string }[]; faults: string[] };
        expect(config.hosts?.map((h) => h.host)).toEqual([...hosts.addresses]);
        // Only the families its schedule uses are enabled (a family not done on hosts would be refused).
        expect(config.faults).toEqual(['partition']);
        expect(readFileSync(join(t.runDir, 'nodes', 'n1', 'probe.jsonl'), 'utf8').length).toBeGreaterThan(0);
      }
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
    });

    it('after the fuzzer is SIGKILLed mid-run, mallory cleanup removes every process, rule and dir on every host', async () => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'run',
          ...sshFlags(),
          '--time',
          '120s',
          '--steps',
          '3',
          '--step',
          '1s',
          '--faults',
          'partition',
          '--seed',
          '3',
          '--store',
          box.store,
        ],
        { env: box.env, cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(child);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<void>((resolve) =>
        child.once('exit', () => {
          resolve();
        }),
      );
      // Wait until the nodes run and a partition rule is in place on some host.
      const ruled = async (): Promise<boolean> => {
        for (let i = 0; i < HOSTS; i++) {
          if ((await leftoversOn(hosts, i)).some((l) => l.startsWith('rule:'))) return true;
        }
        return false;
      };
      const deadline = Date.now() + 90_000;
      while (!(await ruled())) {
        if (Date.now() > deadline) throw new Error(`no partition rule appeared: ${stderr}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      // The run's dir is on the hosts now (so its absence after says it was removed).
      expect(hostRunDirs(box.store)).toHaveLength(1);
      child.kill('SIGKILL');
      await exited;
      const left = (await Promise.all([0, 1, 2].map((i) => leftoversOn(hosts, i)))).flat();
      expect(left.some((l) => l.startsWith('process'))).toBe(true);

      const cleanup = await mallory(['cleanup'], box);
      expect(cleanup.code).toBe(0);
      expect(cleanup.stdout).toMatch(/process group \d+ on /);
      expect(cleanup.stdout).toMatch(/iptables rule on /);

      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
    });

    it('on Ctrl-C (SIGINT) mid-run, removes every process, rule and dir it made on every host', async () => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'run',
          ...sshFlags(),
          '--time',
          '120s',
          '--steps',
          '3',
          '--step',
          '1s',
          '--faults',
          'partition',
          '--seed',
          '5',
          '--store',
          box.store,
        ],
        { env: box.env, cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      children.push(child);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          resolve(code);
        }),
      );
      const deadline = Date.now() + 90_000;
      for (;;) {
        const left = (await Promise.all([0, 1, 2].map((i) => leftoversOn(hosts, i)))).flat();
        if (left.some((l) => l.startsWith('rule:'))) break;
        if (Date.now() > deadline) throw new Error(`no partition rule appeared: ${stderr}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      // The run's dir is on the hosts now (so its absence after says it was removed).
      expect(hostRunDirs(box.store)).toHaveLength(1);
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(130);
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
      expect(hostRunDirs(box.store)).toEqual([]);
    });

    it('refuses, in one line naming the host, a host that refuses the connection, rejects the key or lacks the command', async () => {
      const stranger = join(box.store, '..', 'stranger');
      await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
      const bad = hosts.addresses[2];
      const cases: [string[], string][] = [
        [
          ['--hosts', `${hosts.addresses[0]},${hosts.addresses[1]},${bad}:2222`],
          `host ${bad}: connection refused on port 2222: start sshd there, or give the port it listens on (--ssh-port)`,
        ],
        [
          ['--hosts', `${hosts.addresses[0]},${hosts.addresses[1]},${bad} ssh-private-key=${stranger}`],
          `host ${bad}: the key was rejected for user root`,
        ],
      ];
      const hostsFile = join(box.store, '..', 'hosts-file');
      mkdirSync(box.store, { recursive: true });
      for (const [extra, message] of cases) {
        const list = extra[0] === '--hosts' ? extra[1] : undefined;
        const args =
          list === undefined
            ? [...sshFlags(), ...extra]
            : (writeFileSync(hostsFile, list.split(',').join('\n') + '\n'),
              ['--hosts', hostsFile, ...sshFlags().slice(2), ...extra.slice(2)]);
        const result = await mallory(
          ['run', ...args, '--time', '5s', '--store', join(box.store, 'refused')],
          box,
        );
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toContain(message);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
      // A system whose node command exists on every host but the third.
      const system = join(box.store, '..', 'only-some.mjs');
      const binDir = join(box.store, '..', 'bins');
      for (const n of ['n1', 'n2']) {
        mkdirSync(join(binDir, n), { recursive: true });
        writeFileSync(join(binDir, n, 'server'), '#!/bin/sh\nexec sleep 300\n', { mode: 0o755 });
      }
      writeFileSync(
        system,
        `export default {
  name: 'only-some', bugs: [], defaultNodes: 3,
  create: () => ({
    name: 'only-some', services: ['client'], peerServices: [], crashPatterns: [],
    doctor: async () => [],
    launch: (node) => ({ command: ${JSON.stringify(binDir)} + '/' + node + '/server', args: [] }),
    ready: async () => true,
    client: () => ({ invoke: async () => ({ type: 'ok' }), close: async () => {} }),
  }),
};\n`,
      );
      const missing = await mallory(
        ['run', '--system', system, ...sshFlags(), '--time', '5s', '--store', join(box.store, 'refused')],
        box,
      );
      expect(missing.code, missing.stderr).toBe(2);
      expect(missing.stderr.trim()).toBe(
        `mallory: host ${bad}: n3's command ${binDir}/n3/server is not there or not executable: install it on the host at that path`,
      );
      expect(existsSync(join(box.store, 'refused'))).toBe(false);
    });
  },
);
