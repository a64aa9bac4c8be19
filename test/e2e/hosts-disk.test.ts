import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { diskLayerNeeds } from '../../src/cluster/disk-layer.js';
import { hostLeftovers, type SshHosts, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { BIN, disposeSandbox, mallory, REPO, type Sandbox, sandbox } from './helpers.js';

const HOSTS = 3;
/** The test hosts share this machine's programs: they can build the layer when this machine can. */
const lacking = (await diskLayerNeeds()).missing;
const unavailable =
  sshHostsUnavailable() ?? (lacking.length > 0 ? `the disk layer needs ${lacking.join(', ')}` : undefined);
// Each host has its own /tmp, so a file is on a host only if it was made or copied there.
const fixture = useSshHosts('e2ehostdisk', { count: HOSTS, ownTmp: true });
/** Bounds the run that finds the bug (it ends after its one schedule, some 20 s of fuzzing). */
const CAMPAIGN_TIMEOUT_MS = 240_000;
const MOUNT_WAIT_MS = 90_000;
const SCHEDULE = join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'ack-before-fsync.jsonl');
const POLL_MS = 200;

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly bugs: readonly { kind: string; name: string; dir: string; message: string }[];
}

/** What host i holds besides its sshd (anything under its own /tmp included), and any FUSE mount of the layer. */
async function leftoversOn(hosts: SshHosts, i: number): Promise<string[]> {
  const found = await hostLeftovers(hosts, i, { files: true });
  const mounts = (await hosts.inHost(i, ['cat', '/proc/mounts'])).stdout;
  for (const line of mounts.split('\n')) {
    if (line.includes('mallory-disk') || line.includes(' /tmp/mallory-')) found.push(`mount: ${line}`);
  }
  return found;
}

describe.skipIf(unavailable !== undefined)(
  `disk faults on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    const sshFlags = (): string[] => fixture.flags();
    /** Nothing of the run on any host (no process, mount or file), nor its copy of the hosts' dir here. */
    const clean = async (runId: string): Promise<void> => {
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(fixture.hosts, i)).toEqual([]);
      expect(existsSync(join(tmpdir(), `mallory-${runId}`))).toBe(false);
    };

    beforeAll(async () => {
      box = sandbox();
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(fixture.hosts, i)).toEqual([]);
    });

    afterAll(async () => {
      // What a failed test's run left on the hosts, before the hosts go.
      await mallory(['cleanup'], box);
      disposeSandbox(box);
    });

    it('doctor --hosts says disk faults can run on each host', async () => {
      const result = await mallory(['doctor', ...sshFlags()], box);
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout.split('\n').filter((l) => /^(ok|MISSING) +host /.test(l));
      expect(lines).toHaveLength(HOSTS);
      for (const line of lines) expect(line).toMatch(/; disk faults: yes$/);
    });

    let bugDir = '';

    it(
      'finds kvraft acking before fsync with lose-unfsynced on the hosts, and leaves no mount, process or file there',
      { timeout: CAMPAIGN_TIMEOUT_MS + 60_000 },
      async () => {
        const result = await mallory(
          [
            'run',
            ...sshFlags(),
            '--bug',
            'ack-before-fsync',
            '--faults',
            'kill,disk',
            // kvraft's own scripted schedule for this switch (the whole cluster loses its unfsynced
            // writes twice): an adaptive campaign on these hosts found the bug in 78 s twice and
            // not within 5 min once (the policy follows what it observes, so seed 7 is not one
            // path), and a test must not depend on that luck.
            '--schedule',
            SCHEDULE,
            '--steps',
            '5',
            '--stop-on-bug',
            '--time',
            '5m',
            '--seed',
            '7',
            '--store',
            box.store,
            '--json',
          ],
          box,
          CAMPAIGN_TIMEOUT_MS,
        );
        expect(result.code, result.stderr).toBe(1);
        const summary = JSON.parse(result.stdout) as Summary;
        expect(summary.status).toBe('complete');
        expect(
          summary.bugs.map((b) => `${b.kind}/${b.name}`),
          JSON.stringify(summary.bugs),
        ).toContain('durability/broken-contract');
        const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8');
        expect(history).toMatch(/"f":"lose-unfsynced"/);
        const runId = (
          JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as { run: { id: string } }
        ).run.id;
        // Each node's layer ran on its host, over its data dir there; its output came back.
        for (const node of ['n1', 'n2', 'n3']) {
          expect(readFileSync(join(summary.runDir, 'nodes', node, 'disk.log'), 'utf8')).toContain(
            `mounted over /tmp/mallory-${runId}/${node}`,
          );
        }
        await clean(runId);
        bugDir = summary.bugs.find((b) => b.kind === 'durability')?.dir ?? '';
      },
    );

    it(
      'replays the bug on the hosts, disk faults and all, and leaves nothing there',
      { timeout: 360_000 },
      async () => {
        expect(bugDir).not.toBe('');
        const store = join(box.store, 'replayed');
        const replay = await mallory(
          ['replay', bugDir, '--repeat', '2', '--store', store, '--json'],
          box,
          300_000,
        );
        expect(replay.stderr).toContain(`on hosts: ${fixture.hosts.addresses.join(', ')}`);
        const result = JSON.parse(replay.stdout) as {
          reproduced: number;
          tries: { runDir: string; reproduced: boolean }[];
        };
        expect(result.tries).toHaveLength(2);
        expect(result.reproduced, replay.stderr).toBeGreaterThanOrEqual(1);
        for (const t of result.tries) {
          const runId = (
            JSON.parse(readFileSync(join(t.runDir, 'results.json'), 'utf8')) as { run: { id: string } }
          ).run.id;
          expect(readFileSync(join(t.runDir, 'nodes', 'n1', 'disk.log'), 'utf8')).toContain('mounted over');
          await clean(runId);
        }
      },
    );
    /** Starts a campaign with disk faults and resolves once every host has its node's layer mounted. */
    async function runUntilMounted(
      seed: number,
    ): Promise<{ child: ReturnType<typeof spawn>; exited: Promise<number | null> }> {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'run',
          ...sshFlags(),
          '--faults',
          'kill,disk',
          '--time',
          '120s',
          '--seed',
          `${seed}`,
          '--store',
          box.store,
        ],
        { env: box.env, cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          resolve(code);
        }),
      );
      const mounted = async (): Promise<boolean> => {
        for (let i = 0; i < HOSTS; i++) {
          if (!(await leftoversOn(fixture.hosts, i)).some((l) => l.includes('fuse.mallory-disk')))
            return false;
        }
        return true;
      };
      const deadline = Date.now() + MOUNT_WAIT_MS;
      while (!(await mounted())) {
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`no disk layer was mounted on every host: ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      return { child, exited };
    }

    it('on Ctrl-C (SIGINT) with the layers mounted, unmounts them and removes everything it made on the hosts', async () => {
      const { child, exited } = await runUntilMounted(5);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(fixture.hosts, i)).toEqual([]);
    });

    it('after the fuzzer is SIGKILLed with the layers mounted, mallory cleanup unmounts them and removes the rest', async () => {
      const { child, exited } = await runUntilMounted(3);
      child.kill('SIGKILL');
      await exited;
      const left = (await Promise.all([0, 1, 2].map((i) => leftoversOn(fixture.hosts, i)))).flat();
      // One layer per host, over its node's dir. From a checkout under /tmp (CI's clone) a host's
      // mounts list that one mount twice, and one unmount removes both lines: distinct lines count.
      expect(new Set(left.filter((l) => l.startsWith('mount:'))).size).toBe(HOSTS);

      const cleanup = await mallory(['cleanup'], box);
      expect(cleanup.code, cleanup.stderr).toBe(0);
      expect(cleanup.stdout).toMatch(/\(n1: disk layer\)/);
      expect(cleanup.stdout).toMatch(/mount \/tmp\/mallory-\S+\/n1 on /);
      for (let i = 0; i < HOSTS; i++) expect(await leftoversOn(fixture.hosts, i)).toEqual([]);
    });
  },
);
