import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { run } from '../../src/core/exec.js';
import { sshHostsUnavailable, type SshHosts, useSshHosts } from '../_helpers/ssh-hosts.js';
import {
  BIN,
  jsonOf,
  mallory,
  malloryJson,
  processesMentioning,
  REPO,
  registryFiles,
  waitFor,
  useSandbox,
} from './helpers.js';
import { planOf, recordOf } from './fleet-helpers.js';

/**
 * `mallory fleet run --hosts`: the workers of a plan on two SSH hosts (network namespaces running
 * Debian's sshd, sharing this machine's files as hosts share a store on a network volume), each
 * started over SSH as `mallory run --plan … --index N` there.
 */
const unavailable = sshHostsUnavailable();
const HOSTS = 2;
const fixture = useSshHosts('e2efleethosts', { count: HOSTS });

/** The worker processes of `planFile` running in host i (in its network namespace). */
async function workersOn(hosts: SshHosts, i: number, planFile: string): Promise<number[]> {
  const pids = (await run(['ip', 'netns', 'pids', hosts.namespace(i)])).stdout.split('\n').filter(Boolean);
  return pids.map(Number).filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv.includes('--plan') && argv.includes(planFile);
    } catch {
      return false;
    }
  });
}

describe.skipIf(unavailable !== undefined)(
  `mallory fleet run --hosts: workers on sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    // Declared after the hosts: its cleanup runs while they are still up.
    const box = useSandbox();
    /** How the hosts run Mallory: this checkout, with the sandbox's state dir (the hosts share its files). */
    const malloryOnHosts = (): string => `env MALLORY_STATE_DIR=${box().state} ${process.execPath} ${BIN}`;

    it('runs every campaign of a plan on the hosts, one at a time on each; the fleet killed, its workers stop; run again, every index is done once', async () => {
      const plan = planOf(box(), 'hosts');
      const args = [
        'fleet',
        'run',
        plan,
        '--workers',
        '1',
        ...fixture.flags(),
        '--mallory-command',
        malloryOnHosts(),
      ];
      const fleet = spawn(process.execPath, [BIN, ...args], { env: box().env, cwd: REPO });
      let fleetErr = '';
      fleet.stderr.on('data', (d: Buffer) => (fleetErr += d.toString()));
      // One worker on each host, running there (in its namespace), each with its campaign's run.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const counts = await Promise.all(
          [0, 1].map(async (i) => (await workersOn(fixture.hosts, i, plan)).length),
        );
        if (counts.every((n) => n === 1) && recordOf(plan, 0)?.runDir !== undefined) break;
        if (Date.now() > deadline) throw new Error(`workers on the hosts: ${counts.join(', ')}; ${fleetErr}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(fleetErr).toMatch(
        new RegExp(`start campaign 0 .* as a worker on host ${fixture.hosts.addresses[0]}`),
      );
      expect(fleetErr).toMatch(
        new RegExp(`start campaign 1 .* as a worker on host ${fixture.hosts.addresses[1]}`),
      );
      // Killed outright: its SSH connections drop, each worker reads EOF, stops its campaign and
      // removes what it made.
      fleet.kill('SIGKILL');
      await waitFor(() => processesMentioning(plan).length === 0, 60_000);
      expect(registryFiles(box())).toEqual([]);
      // Stopped, not run to their end (an 8 s campaign left alone would have finished).
      const stopped = jsonOf(malloryJson(['fleet', 'status', plan, '--json'], box())) as {
        counts: Record<string, number>;
      };
      expect(stopped.counts.done).toBe(0);
      expect(stopped.counts.interrupted + stopped.counts.abandoned).toBe(2);

      const again = await mallory(args, box());
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain('4 campaigns: 4 done');
      for (const index of [0, 1, 2, 3]) expect(recordOf(plan, index)?.status).toBe('done');
      // The interrupted two ran again from their start; the other two once.
      expect([0, 1, 2, 3].map((i) => recordOf(plan, i)?.attempt)).toEqual([2, 2, 1, 1]);
      for (const address of fixture.hosts.addresses) expect(again.stderr).toContain(`on host ${address}`);
      // Each worker's output is in its log here.
      expect(readFileSync(join(plan, '..', 'logs', '3.log'), 'utf8')).toMatch(
        /plan hosts: campaign 3 of 4 .*\n[^]*campaign 3 done/,
      );
      expect(registryFiles(box())).toEqual([]);
      expect(processesMentioning(box().store)).toEqual([]);
    }, 600_000);

    it('refuses in one line, before any worker starts, a host without Mallory and a store the hosts do not share', async () => {
      const plan = planOf(box(), 'refused');
      const base = ['fleet', 'run', plan, ...fixture.flags()];
      const missing = await mallory([...base, '--mallory-command', '/nowhere/mallory'], box());
      expect(missing.code, missing.stderr).toBe(2);
      expect(missing.stderr).toMatch(
        /^mallory: host \S+: `\/nowhere\/mallory --version` failed \(exit \d+: .*\): install Mallory there, or say how it runs with --mallory-command\n$/,
      );
      const unshared = await mallory(
        [...base, '--mallory-command', malloryOnHosts(), '--plan-on-hosts', '/nowhere/plans/x/plan.json'],
        box(),
      );
      expect(unshared.code, unshared.stderr).toBe(2);
      expect(unshared.stderr).toMatch(/^mallory: host \S+: the plan's store is not shared with this machine/);
      expect(unshared.stderr.trim().split('\n')).toHaveLength(1);
      // Nothing ran, and the probe file is gone.
      expect(recordOf(plan, 0)).toBeUndefined();
      expect(readdirSync(join(plan, '..')).filter((f) => f.startsWith('.fleet-probe'))).toEqual([]);
      expect(existsSync(join(plan, '..', 'logs'))).toBe(false);
      const without = await mallory(['fleet', 'run', plan, '--mallory-command', 'mallory'], box());
      expect(without.code).toBe(2);
      expect(without.stderr).toContain('--mallory-command and --plan-on-hosts go with --hosts');
    }, 120_000);
  },
);
