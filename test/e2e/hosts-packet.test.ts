import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../src/core/exec.js';
import { hostLeftovers, type SshHosts, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { disposeSandbox, mallory, type Sandbox, sandbox } from './helpers.js';

const unavailable = sshHostsUnavailable();
const HOSTS = 3;
const POLL_MS = 200;
const LEFTOVER_WAIT_MS = 10_000;

/** The run's rules in a host's INPUT chain, read from its namespace (not over SSH). */
async function malloryRules(hosts: SshHosts, i: number): Promise<string[]> {
  const rules = (await run(['ip', 'netns', 'exec', hosts.namespace(i), 'iptables', '-S', 'INPUT'])).stdout;
  return rules.split('\n').filter((line) => line.includes('mallory-'));
}

/** The command lines of a host's processes, read from its namespace. */
async function processesOn(hosts: SshHosts, i: number): Promise<string[]> {
  const pids = (await run(['ip', 'netns', 'pids', hosts.namespace(i)])).stdout
    .split('\n')
    .filter((p) => p.trim() !== '');
  return pids.flatMap((pid) => {
    try {
      return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()];
    } catch {
      return [];
    }
  });
}

/** What host i holds besides its sshd. */
const leftoversOn = (hosts: SshHosts, i: number): Promise<string[]> => hostLeftovers(hosts, i);

/**
 * What is left on the hosts once `leftoversOn` says nothing, or after `LEFTOVER_WAIT_MS`: an SSH
 * session's own processes (the login shell's) may outlive its channel by a moment.
 */
async function settledLeftovers(hosts: SshHosts): Promise<string[]> {
  const deadline = Date.now() + LEFTOVER_WAIT_MS;
  for (;;) {
    const found = (await Promise.all([0, 1, 2].map((i) => leftoversOn(hosts, i)))).flat();
    if (found.length === 0 || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The run's dir on the hosts (they share this machine's files): `/tmp/mallory-<run id>`. */
function hostRunDir(runDir: string): string {
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    const { id } = db.prepare('SELECT id FROM run').get() as { id: string };
    return join(tmpdir(), `mallory-${id}`);
  } finally {
    db.close();
  }
}

describe.skipIf(unavailable !== undefined)(
  `mallory run --hosts with packet faults${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let box: Sandbox;
    const fixture = useSshHosts('e2epacket');
    let hosts: SshHosts;
    const sshFlags = (): string[] => fixture.flags();

    beforeAll(() => {
      box = sandbox();
      hosts = fixture.hosts;
    });

    afterAll(() => {
      disposeSandbox(box);
    });

    it("enacts loss as iptables statistic rules on the hosts over SSH, captures each node's traffic there with tcpdump into the run, and leaves nothing on any host", async () => {
      const seen = new Map<number, string>();
      const capturing = new Set<number>();
      let done = false;
      const running = mallory(
        [
          'run',
          ...sshFlags(),
          '--faults',
          'partition,kill,pause,packet:loss',
          '--time',
          '20s',
          '--steps',
          '6',
          '--step',
          '1s',
          '--seed',
          '11',
          '--store',
          box.store,
          '--json',
        ],
        box,
      ).finally(() => (done = true));
      while (!done) {
        for (let i = 0; i < HOSTS; i++) {
          const loss = (await malloryRules(hosts, i)).find((r) => r.includes('statistic'));
          if (loss !== undefined) seen.set(i, loss);
          if ((await processesOn(hosts, i)).some((cmd) => cmd.startsWith('tcpdump '))) capturing.add(i);
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      const result = await running;
      expect(result.stderr).not.toMatch(/Error:/);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as {
        runDir: string;
        status: string;
        metrics: Record<string, number>;
      };
      expect(summary.status).toBe('complete');
      const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8');
      expect(history).toMatch(/"f":"start-packet","value":\{"target":"[a-z]+","lossPct":\d+\}/);
      // Every host received from a lossy link at some point: a rule dropping at random from a peer.
      expect([...seen.keys()].sort()).toEqual([0, 1, 2]);
      for (const rule of seen.values()) {
        expect(rule).toMatch(
          /^-A INPUT -s 10\.\d+\.\d+\.\d+\/32 -m statistic --mode random --probability 0\.\d+ -m comment --comment mallory-\S+ -j DROP$/,
        );
      }
      // Each host captured its node's traffic, streamed back over SSH into the run's timeline.
      expect([...capturing].sort()).toEqual([0, 1, 2]);
      expect(summary.metrics.net_events).toBeGreaterThan(100);
      const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
        coverage: Record<string, number>;
      };
      expect(results.coverage.net_events).toBe(summary.metrics.net_events);
      expect(await settledLeftovers(hosts)).toEqual([]);
      expect(existsSync(hostRunDir(summary.runDir))).toBe(false);
    });

    it('refuses delay on hosts without netem before any node starts, in one line naming the host; packet:loss is what it offers', async () => {
      const store = join(box.store, 'refused');
      const result = await mallory(
        ['run', ...sshFlags(), '--faults', 'partition,packet', '--time', '5s', '--store', store],
        box,
      );
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^mallory: host (10\.\d+\.\d+\.\d+): packet faults need delay \(tc netem\), and this host's kernel has no netem qdisc \(tc: .+\): .*--faults packet:loss/,
      );
      expect(hosts.addresses).toContain(/host (\S+):/.exec(lines[0])?.[1]);
      expect(existsSync(store)).toBe(false);
      expect(await settledLeftovers(hosts)).toEqual([]);
    });
  },
);
