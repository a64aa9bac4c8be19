import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hostLeftovers, type SshHosts, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { disposeSandbox, mallory, type Sandbox, sandbox } from './helpers.js';

const HOSTS = 3;
const BINARIES = ['/usr/bin/etcd', '/usr/bin/redis-server', '/usr/bin/redis-sentinel', '/usr/bin/nsenter'];
const unavailable =
  sshHostsUnavailable() ??
  BINARIES.filter((b) => !existsSync(b))
    .map((b) => `${b} is missing`)
    .join(', ');

/** What host i holds besides its sshd, anything under its own /tmp included. */
const leftoversOn = (hosts: SshHosts, i: number): Promise<string[]> =>
  hostLeftovers(hosts, i, { files: true });

/** The run's id and dir from `mallory run --json`'s summary and the run's results. */
function runOf(stdout: string): { id: string; dir: string; valid: boolean | 'unknown' } {
  const summary = JSON.parse(stdout) as { runDir: string; status: string };
  expect(summary.status).toBe('complete');
  const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
    run: { id: string };
    verdict: { valid: boolean | 'unknown' };
  };
  return { id: results.run.id, dir: summary.runDir, valid: results.verdict.valid };
}

describe.skipIf(unavailable !== '')(
  `etcd and redis on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    /** A dir outside /tmp (each host has its own /tmp): a file here is on every host as it is. */
    let keys: string;
    const fixture = useSshHosts('e2ehostsys', { ownTmp: true });
    let hosts: SshHosts;
    const sshFlags = (): string[] => fixture.flags();
    /** Nothing of the run on any host, nor its copy of the hosts' dir here (`/tmp/mallory-<run>`). */
    const clean = async (runId: string): Promise<void> => {
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
      expect(existsSync(join(tmpdir(), `mallory-${runId}`))).toBe(false);
    };

    beforeAll(async () => {
      box = sandbox();
      hosts = fixture.hosts;
      keys = fixture.dir;
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(hosts, i)).toEqual([]);
    });

    afterAll(() => {
      disposeSandbox(box);
    });

    /** A schedule file that enacts a partition, a kill, a pause, a member removal and addition, and packet loss. */
    function etcdSchedule(): string {
      const file = join(box.store, '..', 'etcd-hosts.jsonl');
      const lines = [
        { atMs: 200, f: 'start-partition', value: 'halves' },
        { atMs: 900, f: 'stop-partition' },
        { atMs: 1200, f: 'kill', nodes: ['n3'] },
        { atMs: 2000, f: 'start', nodes: ['n3'] },
        { atMs: 2600, f: 'pause', nodes: ['n2'] },
        { atMs: 3000, f: 'resume', nodes: ['n2'] },
        { atMs: 3600, f: 'member-remove', nodes: ['n3'] },
        { atMs: 4600, f: 'member-add', nodes: ['n3'] },
        { atMs: 5200, f: 'start-packet', value: { target: 'minority', lossPct: 30 } },
        { atMs: 5800, f: 'stop-packet' },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      return file;
    }

    it('runs an etcd campaign with partitions, kills, pauses, membership changes and packet loss enacted over SSH to a valid verdict, leaving nothing on any host', async () => {
      const result = await mallory(
        [
          'run',
          '--system',
          'etcd',
          ...sshFlags(),
          '--faults',
          'partition,kill,pause,member,packet:loss',
          // Each family once, in a fixed schedule (a policy's choices vary with timing).
          '--schedule',
          etcdSchedule(),
          '--steps',
          '6',
          '--step',
          '1s',
          '--time',
          '60s',
          '--seed',
          '11',
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(result.code, result.stderr).toBe(0);
      const run = runOf(result.stdout);
      expect(run.valid).toBe(true);
      const history = readFileSync(join(run.dir, 'history.jsonl'), 'utf8');
      // Enacted: a nemesis completion (what it acted on, not the target it was asked for), no error.
      const faults = new Set(
        history
          .split('\n')
          .filter((l) => l.includes('"nemesis"'))
          .map((l) => JSON.parse(l) as { f: string; value: unknown; error?: string })
          .filter((e) => typeof e.value !== 'string' && e.error === undefined)
          .map((e) => e.f),
      );
      for (const f of ['start-partition', 'kill', 'pause', 'member-remove', 'member-add', 'start-packet'])
        expect([...faults]).toContain(f);
      expect(history).toMatch(/"type":"ok"/);
      // etcd's own log came back over SSH: it names the host's address it listened on.
      expect(readFileSync(join(run.dir, 'nodes', 'n2', 'stderr.log'), 'utf8')).toContain(hosts.addresses[1]);
      await clean(run.id);
    });

    it('runs redis with its sentinels on the hosts, their configs copied there', async () => {
      const result = await mallory(
        [
          'run',
          '--system',
          'redis',
          ...sshFlags(),
          '--faults',
          'kill,pause',
          // Sentinels take some 25 s to know every replica, before any schedule starts.
          '--time',
          '45s',
          '--steps',
          '3',
          '--step',
          '1s',
          '--seed',
          '5',
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(result.code, result.stderr).toBe(0);
      const run = runOf(result.stdout);
      expect(readFileSync(join(run.dir, 'history.jsonl'), 'utf8')).toMatch(/"type":"ok"/);
      // redis-server and its sentinel read the configs copied to their host: the replicas and
      // sentinels found each other at the hosts' addresses the configs name.
      const log = readFileSync(join(run.dir, 'nodes', 'n3', 'stdout.log'), 'utf8');
      expect(log).toMatch(/Ready to accept connections/);
      expect(log).toContain(`+slave slave ${hosts.addresses[1]}:6379`);
      await clean(run.id);
    });
    it("finds redis's lost writes on the hosts (the primary cut off from its replicas) and replays the bug there from its record (no host flags)", async () => {
      const schedule = join(keys, 'isolate.jsonl');
      writeFileSync(
        schedule,
        [
          { atMs: 1000, f: 'start-partition', value: 'leader' },
          { atMs: 8000, f: 'stop-partition', value: null },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n',
      );
      const found = await mallory(
        [
          'run',
          '--system',
          'redis',
          '--workload',
          'set',
          '--schedule',
          schedule,
          '--steps',
          '4',
          '--seed',
          '3',
          ...sshFlags(),
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(found.code, found.stderr).toBe(1);
      const run = runOf(found.stdout);
      expect(run.valid).toBe(false);
      const bugDir = join(run.dir, 'bugs', '1');
      expect(readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8')).toContain('lost-elements');
      await clean(run.id);

      // No host flags: the hosts come from the bug's record (its schedule header).
      const replay = await mallory(['replay', bugDir, '--repeat', '1', '--store', box.store, '--json'], box);
      expect(replay.stderr).toContain(`on hosts: ${hosts.addresses.join(', ')}`);
      expect(replay.code, replay.stderr).toBe(1);
      const result = JSON.parse(replay.stdout) as { reproduced: number; tries: { runDir: string }[] };
      expect(result.reproduced).toBe(1);
      const tried = JSON.parse(readFileSync(join(result.tries[0].runDir, 'results.json'), 'utf8')) as {
        run: { id: string; config: { hosts?: unknown[] } };
      };
      expect(tried.run.config.hosts).toHaveLength(HOSTS);
      await clean(tried.run.id);
    });

    it('mallory doctor --hosts says per host what it has for the system, and exits 0', async () => {
      const result = await mallory(['doctor', '--system', 'etcd', ...sshFlags()], box);
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines).toHaveLength(HOSTS + 1);
      hosts.addresses.forEach((address, i) => {
        expect(lines[i]).toMatch(new RegExp(`^ok +host ${address.replace(/\./g, '\\.')} \\(n${i + 1}\\): `));
        expect(lines[i]).toContain('iptables');
        expect(lines[i]).toContain(', tar,');
        expect(lines[i]).toContain('etcd: etcd Version: 3.4');
      });
      expect(lines[HOSTS]).toBe('mallory doctor: every host has what etcd needs');
    });

    it('mallory doctor --hosts names, in one line, a host that refuses the connection and a host that lacks the command, and exits 2', async () => {
      const [a, b, c] = hosts.addresses;
      const refused = await mallory(
        ['doctor', '--system', 'etcd', ...sshFlags().slice(2), '--hosts', `${a},${b},${c}:2222`],
        box,
      );
      expect(refused.code, refused.stderr).toBe(2);
      const lines = refused.stdout.trim().split('\n');
      expect(lines.filter((l) => l.startsWith('ok '))).toHaveLength(2);
      expect(lines[2]).toBe(
        `MISSING  host ${c} (n3): connection refused on port 2222: start sshd there, or give the port it listens on (--ssh-port)`,
      );
      expect(lines[3]).toBe('mallory doctor: 1 of 3 hosts lack something — see the fixes above');

      // A system whose node command is on the first two hosts only (outside /tmp: every host sees it).
      const bins = join(keys, 'bins');
      for (const n of ['n1', 'n2']) {
        mkdirSync(join(bins, n), { recursive: true });
        writeFileSync(join(bins, n, 'server'), '#!/bin/sh\nexec sleep 300\n', { mode: 0o755 });
      }
      const system = join(keys, 'only-some.mjs');
      writeFileSync(
        system,
        `export default {
  name: 'only-some', bugs: [], defaultNodes: 3,
  create: () => ({
    name: 'only-some', services: ['client'], peerServices: [], crashPatterns: [],
    doctor: async () => [],
    launch: (node) => ({ command: ${JSON.stringify(bins)} + '/' + node + '/server', args: [] }),
    ready: async () => true,
    client: () => ({ invoke: async () => ({ type: 'ok' }), close: async () => {} }),
  }),
};\n`,
      );
      const lacking = await mallory(['doctor', '--system', system, ...sshFlags()], box);
      expect(lacking.code, lacking.stderr).toBe(2);
      const out = lacking.stdout.trim().split('\n');
      // The line ends with whether disk faults can run there (the hosts share this machine's tools).
      expect(out[2]).toMatch(/; disk faults: (yes|no, lacks .+)$/);
      expect(out[2].replace(/; disk faults: .*$/, '')).toBe(
        `MISSING  host ${c} (n3): n3's command ${bins}/n3/server (fix: install it on the host at that path)`,
      );
      expect(out.slice(0, 2).every((l) => l.startsWith('ok '))).toBe(true);
    });
  },
);
