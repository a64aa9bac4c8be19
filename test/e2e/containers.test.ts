import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ResourceRegistry } from '../../src/cluster/resources.js';
import { docker } from '../../src/cluster/runtime/docker.js';
import {
  DOCKER,
  type PrivateDocker,
  privateDockerUnavailable,
  startPrivateDocker,
} from '../_helpers/private-docker.js';
import { BIN, disposeSandbox, mallory, processesMentioning, REPO, type Sandbox, sandbox } from './helpers.js';

const unavailable =
  privateDockerUnavailable() ??
  (existsSync('/usr/bin/etcd') ? undefined : 'no /usr/bin/etcd: apt-get install -y etcd-server');
const IMAGE = 'mallory-etcd:1';
const NO_IPTABLES = 'mallory-etcd-noiptables:1';

describe.skipIf(unavailable !== undefined)(
  `mallory run --hosts docker:IMAGE: etcd in containers of a private dockerd${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    let registry: ResourceRegistry;
    let daemon: PrivateDocker;
    const flags = (image = IMAGE): string[] => [
      '--system',
      'etcd',
      '--hosts',
      `docker:${image}`,
      '--docker-host',
      daemon.endpoint.host ?? '',
    ];
    /**
     * What is left of any run: the daemon's containers and networks (it holds nothing else), and
     * docker clients on this machine still talking to the daemon (`docker exec` of a node or a
     * stream), the daemon itself left out.
     */
    const leftovers = async (): Promise<string[]> => [
      ...(await daemon.containers()).map((c) => `container ${c}`),
      ...(await daemon.networks()).map((n) => `network ${n}`),
      ...processesMentioning(`${daemon.endpoint.host ?? ''}\0exec`).map((p) => `docker client ${p}`),
    ];
    const waitForContainers = async (count: number, stderr: () => string): Promise<void> => {
      const deadline = Date.now() + 90_000;
      while ((await daemon.containers()).length < count) {
        if (Date.now() > deadline) throw new Error(`no ${count} containers appeared: ${stderr()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    /** Until a node runs in each container of the run (its etcd log streamed back). */
    const runDirs = (): string[] =>
      existsSync(join(box.store, 'etcd'))
        ? readdirSync(join(box.store, 'etcd')).map((d) => join(box.store, 'etcd', d))
        : [];
    const waitForNodes = async (run: { before: string[]; stderr: () => string }): Promise<void> => {
      const running = (): boolean =>
        runDirs()
          .filter((d) => !run.before.includes(d))
          .some((d) =>
            ['n1', 'n2', 'n3'].every((n) => {
              try {
                return readFileSync(join(d, 'nodes', n, 'stderr.log'), 'utf8').includes('"name":');
              } catch {
                return false;
              }
            }),
          );
      const deadline = Date.now() + 90_000;
      while (!running()) {
        if (Date.now() > deadline) throw new Error(`no node started: ${run.stderr()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    /** The fuzzer in its own process group, as a shell starts a command. */
    const start = (args: readonly string[]) => {
      const before = runDirs();
      const child = spawn(process.execPath, [BIN, 'run', ...args], {
        env: box.env,
        cwd: REPO,
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          resolve(code);
        }),
      );
      return { child, exited, before, stderr: () => stderr };
    };

    beforeAll(async () => {
      box = sandbox();
      // Debian's client, not whatever other docker is first on PATH.
      box.env.MALLORY_DOCKER = DOCKER;
      delete box.env.DOCKER_HOST;
      const root = join(box.store, '..');
      const state = join(root, 'docker-state');
      mkdirSync(state, { recursive: true });
      const saved = process.env.MALLORY_STATE_DIR;
      process.env.MALLORY_STATE_DIR = state;
      registry = new ResourceRegistry(`e2edocker${process.pid}`);
      if (saved === undefined) delete process.env.MALLORY_STATE_DIR;
      else process.env.MALLORY_STATE_DIR = saved;
      daemon = await startPrivateDocker(join(root, 'd'), registry);
      await daemon.buildImage(IMAGE, ['etcd']);
      await daemon.buildImage(NO_IPTABLES, ['etcd'], { iptables: false });
    });

    afterAll(async () => {
      await daemon.close();
      registry.releaseAll();
      disposeSandbox(box);
    });

    it('runs a campaign with partitions, kills and pauses in the containers, then removes every container and its network', async () => {
      const result = await mallory(
        [
          'run',
          ...flags(),
          '--time',
          '20s',
          '--faults',
          'partition,kill,pause',
          '--seed',
          '11',
          '--store',
          box.store,
          '--json',
        ],
        box,
      );
      expect(result.stderr).not.toMatch(/Error:/);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as {
        runDir: string;
        status: string;
        verdict: { valid: boolean | string };
      };
      expect(summary.status).toBe('complete');
      expect(result.stderr).toMatch(/verdict: valid/);
      const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8');
      const enacted = new Set(
        history
          .split('\n')
          .filter((l) => l.includes('"nemesis"'))
          .map((l) => JSON.parse(l) as { f: string; value: unknown; error?: string })
          .filter((e) => Array.isArray(e.value) && e.error === undefined)
          .map((e) => e.f),
      );
      expect([...enacted].filter((f) => ['start-partition', 'kill', 'pause'].includes(f)).sort()).toEqual([
        'kill',
        'pause',
        'start-partition',
      ]);
      expect(history).toMatch(/"type":"ok"/);
      // The nodes' output came back out of the containers: each node's own etcd log.
      for (const node of ['n1', 'n2', 'n3']) {
        expect(readFileSync(join(summary.runDir, 'nodes', node, 'stderr.log'), 'utf8')).toContain(
          `"name":"${node}"`,
        );
      }
      expect(await leftovers()).toEqual([]);
      expect(readdirSync(box.state).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
    });

    it('drops a share of the packets between containers (--faults packet:loss: iptables statistic rules in the receiving containers), then removes every container', async () => {
      const schedule = join(box.store, '..', 'loss.jsonl');
      writeFileSync(
        schedule,
        [
          { atMs: 500, f: 'start-packet', value: { target: 'all', lossPct: 40 } },
          // Long enough for a few polls of three containers through docker exec (each ~0.1–1 s).
          { atMs: 12_000, f: 'stop-packet', value: 'all' },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n') + '\n',
      );
      const run = start([
        ...flags(),
        '--faults',
        'packet:loss',
        '--schedule',
        schedule,
        '--steps',
        '14',
        '--step',
        '1s',
        '--time',
        '3m',
        '--seed',
        '4',
        '--store',
        box.store,
        '--json',
      ]);
      await waitForContainers(3, run.stderr);
      // While the loss lasts, each container holds the run's statistic rules (seen from inside it).
      let lastListing = '';
      const lossRules = async (): Promise<number> => {
        let count = 0;
        for (const name of await daemon.containers()) {
          const listed = await docker(daemon.endpoint, [
            'exec',
            name,
            'sh',
            '-c',
            'iptables -S INPUT 2>/dev/null || xtables-nft-multi iptables -S INPUT 2>/dev/null || xtables-legacy-multi iptables -S INPUT',
          ]);
          lastListing = `${name}: ${listed.stdout.toString().replace(/\n/g, ' / ')}`;
          // iptables prints the share as it holds it (0.39999999991 for 0.4).
          count += listed.stdout
            .toString()
            .split('\n')
            .filter((l) => {
              const share = /--mode random --probability ([\d.]+)/.exec(l)?.[1];
              return share !== undefined && Math.abs(Number(share) - 0.4) < 0.001 && l.includes('mallory-');
            }).length;
        }
        return count;
      };
      // Every container drops from each of its two peers: six rules, added one by one.
      let seen = 0;
      const deadline = Date.now() + 120_000;
      try {
        while (seen < 6 && Date.now() < deadline && run.child.exitCode === null) {
          seen = await lossRules();
          if (seen < 6) await new Promise((r) => setTimeout(r, 200));
        }
        expect(seen, `${run.stderr()}\nlast listing ${lastListing}`).toBe(6);
        expect(await run.exited, run.stderr()).toBe(0);
      } finally {
        if (run.child.exitCode === null) {
          process.kill(-(run.child.pid ?? 0), 'SIGINT');
          await run.exited;
        }
      }
      const history = readdirSync(join(box.store, 'etcd'))
        .map((d) => join(box.store, 'etcd', d, 'history.jsonl'))
        .filter((f) => existsSync(f) && readFileSync(f, 'utf8').includes('"start-packet"'))
        .map((f) => readFileSync(f, 'utf8'))[0];
      const packet = history
        .split('\n')
        .filter((l) => l.includes('-packet"'))
        .map((l) => JSON.parse(l) as { f: string; error?: string });
      // Asked for and done, each without an error.
      expect(packet.map((p) => p.f)).toEqual(['start-packet', 'start-packet', 'stop-packet', 'stop-packet']);
      expect(packet.filter((p) => p.error !== undefined)).toEqual([]);
      expect(await leftovers()).toEqual([]);
    });

    /** How a run is interrupted mid-run, and what is checked between that and the final checks. */
    const interruptions: {
      readonly title: string;
      readonly seed: number;
      readonly interrupt: (run: ReturnType<typeof start>) => Promise<void>;
    }[] = [
      {
        title: 'after the fuzzer is SIGKILLed mid-run, mallory cleanup removes its containers and network',
        seed: 3,
        interrupt: async (run) => {
          run.child.kill('SIGKILL');
          await run.exited;
          const left = await leftovers();
          expect(left.filter((l) => !l.startsWith('docker client'))).toHaveLength(4);
          // The node's docker exec clients outlive the fuzzer until their containers go.
          expect(left.some((l) => l.startsWith('docker client'))).toBe(true);

          const cleanup = await mallory(['cleanup'], box);
          expect(cleanup.code, cleanup.stderr).toBe(0);
          expect(cleanup.stdout).toMatch(/docker container mallory-\S+-n1 \(n1\)/);
          expect(cleanup.stdout).toMatch(/docker network mallory-/);
        },
      },
      {
        title:
          'on Ctrl-C (SIGINT to its process group) mid-run, removes its containers and network, and no docker client is left',
        seed: 5,
        interrupt: async (run) => {
          // As Ctrl-C at a terminal: to the whole foreground group.
          process.kill(-(run.child.pid ?? 0), 'SIGINT');
          expect(await run.exited, run.stderr()).toBe(130);
        },
      },
    ];
    it.each(interruptions)('$title', async ({ seed, interrupt }) => {
      const run = start([...flags(), '--time', '120s', '--seed', String(seed), '--store', box.store]);
      await waitForContainers(3, run.stderr);
      await waitForNodes(run);
      await interrupt(run);
      expect(await leftovers()).toEqual([]);
      expect(readdirSync(box.state).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
    });

    it('refuses in one line, before any container is made: no docker client, no daemon, no such image, an image without iptables', async () => {
      const refused = join(box.store, 'refused');
      const cases: [string[], NodeJS.ProcessEnv, string][] = [
        [
          flags(),
          { MALLORY_DOCKER: '', PATH: '/nonexistent' },
          `mallory: --hosts docker:${IMAGE}: no docker client (no docker on PATH): apt-get install -y docker.io`,
        ],
        [
          [...flags().slice(0, 4), '--docker-host', `unix://${join(box.store, '..', 'none.sock')}`],
          {},
          `mallory: --hosts docker:${IMAGE}: cannot reach the docker daemon at unix://${join(box.store, '..', 'none.sock')} (`,
        ],
        [
          flags('mallory-not-built:1'),
          {},
          'mallory: --hosts docker:mallory-not-built:1: the daemon has no image mallory-not-built:1 (nothing is pulled)',
        ],
        [
          flags(NO_IPTABLES),
          {},
          `mallory: --hosts docker:${NO_IPTABLES}: partitions need iptables in the image`,
        ],
        [
          [...flags(), '--faults', 'partition,packet'],
          {},
          'mallory: --faults packet: in containers packet faults are loss only (iptables statistic rules), not delay: give --faults …,packet:loss',
        ],
        [
          [...flags(NO_IPTABLES), '--faults', 'kill,packet:loss'],
          {},
          `mallory: --hosts docker:${NO_IPTABLES}: packet loss needs iptables in the image`,
        ],
        [
          [...flags(), '--faults', 'member'],
          {},
          '--faults member: not in containers (membership changes wipe data dirs',
        ],
      ];
      for (const [args, env, message] of cases) {
        const result = await mallory(['run', ...args, '--time', '5s', '--store', refused], {
          ...box,
          env: { ...box.env, ...env },
        });
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toContain(message);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
      // Without partitions the image without iptables is fine as far as the check goes.
      expect(await leftovers()).toEqual([]);
      expect(existsSync(refused)).toBe(false);
    });
  },
);
