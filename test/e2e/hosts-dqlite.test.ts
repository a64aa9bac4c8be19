import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { dqliteAppBinary } from '../../src/systems/dqlite/app-source.js';
import { hostLeftovers, type SshHosts, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { disposeSandbox, mallory, type Sandbox, sandbox } from './helpers.js';

const HOSTS = 3;
const NEEDS = ['/usr/bin/dqlite-demo', '/usr/bin/dqlite', '/usr/bin/go', '/usr/bin/gcc', '/usr/bin/nsenter'];
const unavailable =
  sshHostsUnavailable() ??
  NEEDS.filter((b) => !existsSync(b))
    .map((b) => `${b} is missing`)
    .join(', ');

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

/** The nemesis operations of the run's history that were enacted (no error, a target acted on). */
function enacted(runDir: string): Set<string> {
  return new Set(
    readFileSync(join(runDir, 'history.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"nemesis"'))
      .map((l) => JSON.parse(l) as { f: string; value: unknown; error?: string })
      .filter((e) => typeof e.value !== 'string' && e.error === undefined)
      .map((e) => e.f),
  );
}

describe.skipIf(unavailable !== '')(
  `dqlite on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    // Each host has its own /tmp: the app built here (in /tmp's cache) is on a host only if copied.
    const fixture = useSshHosts('e2ehostdq', { ownTmp: true });
    let hosts: SshHosts;
    /** Nothing of the run on any host (processes, rules, files under its /tmp), nor its dir here. */
    const clean = async (runId?: string): Promise<void> => {
      for (let i = 0; i < HOSTS; i++) expect(await hostLeftovers(hosts, i, { files: true })).toEqual([]);
      if (runId !== undefined) expect(existsSync(join(tmpdir(), `mallory-${runId}`))).toBe(false);
    };

    /**
     * Nothing on any host once the sessions of a refused run's check have ended: sshd ends a
     * session's shell when its connection closes, a moment after the fuzzer exits.
     */
    const settled = async (): Promise<void> => {
      const deadline = Date.now() + 10_000;
      const left = async (): Promise<string[]> =>
        (await Promise.all(hosts.addresses.map((_, i) => hostLeftovers(hosts, i, { files: true })))).flat();
      let found = await left();
      while (found.length > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        found = await left();
      }
      expect(found).toEqual([]);
    };

    beforeAll(async () => {
      box = sandbox();
      hosts = fixture.hosts;
      await clean();
    });

    afterAll(() => {
      disposeSandbox(box);
    });

    /** A partition, a kill, a pause and a member removal and addition, each once. */
    function schedule(): string {
      const file = join(box.store, '..', 'dqlite-hosts.jsonl');
      const lines = [
        { atMs: 200, f: 'start-partition', value: 'halves' },
        { atMs: 1200, f: 'stop-partition' },
        { atMs: 1600, f: 'kill', nodes: ['n3'] },
        { atMs: 2600, f: 'start', nodes: ['n3'] },
        { atMs: 3200, f: 'pause', nodes: ['n2'] },
        { atMs: 3800, f: 'resume', nodes: ['n2'] },
        { atMs: 4400, f: 'member-remove', nodes: ['n3'] },
        { atMs: 5600, f: 'member-add', nodes: ['n3'] },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      return file;
    }

    it('runs dqlite-app (built here, copied to each host) with partitions, kills, pauses and membership changes over SSH to a valid verdict, leaving nothing on any host', async () => {
      const result = await mallory(
        [
          'run',
          '--system',
          'dqlite-app',
          ...fixture.flags(),
          '--faults',
          'partition,kill,pause,member',
          '--schedule',
          schedule(),
          '--steps',
          '7',
          '--step',
          '1s',
          '--time',
          '40s',
          '--seed',
          '3',
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(result.code, result.stderr).toBe(0);
      const run = runOf(result.stdout);
      expect(run.valid).toBe(true);
      const faults = enacted(run.dir);
      for (const f of ['start-partition', 'kill', 'pause', 'member-remove', 'member-add'])
        expect([...faults]).toContain(f);
      const history = readFileSync(join(run.dir, 'history.jsonl'), 'utf8');
      expect(history).toMatch(/"f":"cas".*"type":"ok"|"type":"ok".*"f":"cas"/);
      // The app built here is not at its path on the hosts: the nodes ran from the run's copies.
      const built = dqliteAppBinary();
      expect(existsSync(built)).toBe(true);
      expect((await hosts.inHost(0, ['test', '-e', built])).code).not.toBe(0);
      // go-dqlite's own log came back over SSH: raft's trace of the node on the second host.
      expect(readFileSync(join(run.dir, 'nodes', 'n2', 'stderr.log'), 'utf8')).toMatch(/raft|dqlite/i);
      await clean(run.id);
    });

    it('runs dqlite (Debian dqlite-demo on the hosts) with partitions, kills and pauses over SSH to a valid verdict, leaving nothing on any host', async () => {
      const result = await mallory(
        [
          'run',
          '--system',
          'dqlite',
          ...fixture.flags(),
          '--faults',
          'partition,kill,pause',
          '--steps',
          '4',
          '--step',
          '1s',
          '--time',
          '30s',
          '--seed',
          '3',
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(result.code, result.stderr).toBe(0);
      const run = runOf(result.stdout);
      expect(run.valid).toBe(true);
      expect(enacted(run.dir).size).toBeGreaterThan(0);
      expect(readFileSync(join(run.dir, 'history.jsonl'), 'utf8')).toMatch(/"type":"ok"/);
      await clean(run.id);
    });

    it("mallory doctor --hosts --system dqlite-app checks on each host the libraries of the app built here, not the build's tools, and exits 0", async () => {
      const result = await mallory(['doctor', '--system', 'dqlite-app', ...fixture.flags()], box);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines).toHaveLength(HOSTS + 1);
      hosts.addresses.forEach((address, i) => {
        expect(lines[i]).toMatch(new RegExp(`^ok +host ${address.replace(/\./g, '\\.')} \\(n${i + 1}\\): `));
        expect(lines[i]).toContain(
          `the libraries of n${i + 1}'s program ${dqliteAppBinary()} (built here, copied at start)`,
        );
        expect(lines[i]).not.toContain('go compiler');
      });
    });

    it('refuses, before any node starts, in one line naming the host, a node program whose shared libraries the host lacks', async () => {
      // A library only this machine has (in its own /tmp), and a program that loads it: installed
      // on every host (outside /tmp), and then built here (copied at start).
      const libs = join(box.store, '..', 'libs');
      mkdirSync(libs, { recursive: true });
      writeFileSync(join(libs, 'lib.c'), 'int mallory_answer(void) { return 0; }\n');
      writeFileSync(
        join(libs, 'main.c'),
        '#include <unistd.h>\nint mallory_answer(void);\nint main(void) { sleep(300); return mallory_answer(); }\n',
      );
      const gcc = (args: string[]): void => {
        const r = spawnSync('gcc', args, { cwd: libs, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
      };
      gcc(['-shared', '-fPIC', '-Wl,-soname,libmallorytest.so.1', '-o', 'libmallorytest.so.1', 'lib.c']);
      const installed = join(fixture.dir, 'bins', 'server');
      mkdirSync(join(fixture.dir, 'bins'), { recursive: true });
      const link = ['main.c', '-L', libs, '-l:libmallorytest.so.1', `-Wl,-rpath,${libs}`];
      gcc(['-o', installed, ...link]);
      gcc(['-o', join(libs, 'server'), ...link]);
      const system = join(fixture.dir, 'libs-system.mjs');
      writeFileSync(
        system,
        `export default {
  name: 'libs', bugs: [], defaultNodes: 3,
  create: () => ({
    name: 'libs', services: ['client'], peerServices: [], crashPatterns: [],
    doctor: async () => [],
    launch: () => process.env.LIBS_BUILT === '1'
      ? { command: ${JSON.stringify(join(libs, 'server'))}, built: true, args: [] }
      : { command: ${JSON.stringify(installed)}, args: [] },
    ready: async () => true,
    client: () => ({ invoke: async () => ({ type: 'ok' }), close: async () => {} }),
  }),
};\n`,
      );
      const refusal = (address: string, node: string, command: string): string =>
        `mallory: host ${address}: ${node}'s program ${command} needs shared libraries the host lacks (libmallorytest.so.1): install them there`;
      for (const [built, command] of [
        ['0', installed],
        ['1', join(libs, 'server')],
      ]) {
        const result = await mallory(
          ['run', '--system', system, ...fixture.flags(), '--time', '10s', '--store', box.store],
          { ...box, env: { ...box.env, LIBS_BUILT: built } },
        );
        expect(result.code, result.stderr).toBe(2);
        // Every host lacks it; the line names the first to answer.
        expect(hosts.addresses.map((a, i) => refusal(a, `n${i + 1}`, command))).toContain(
          result.stderr.trim(),
        );
        await settled();
      }
    });
  },
);
