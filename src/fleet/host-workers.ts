import { randomBytes } from 'node:crypto';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

import { connectSshHost, HostError, type SshHost, type SshTarget } from '../cluster/runtime/ssh.js';
import { UsageError } from '../core/errors.js';
import { FLEET_WORKER_ENV, type WorkerSlot } from './local-fleet.js';
import type { Plan } from './plan.js';

export interface HostWorkersOptions {
  readonly targets: readonly SshTarget[];
  /** Campaigns at once on each host. */
  readonly perHost: number;
  /** The command that runs Mallory on the hosts, as words (default `mallory`). */
  readonly malloryCommand: readonly string[];
  /** The plan file's path on the hosts (default: its path here: the store mounted at the same path). */
  readonly planOnHosts: string;
  /** This machine's Mallory version: the hosts must run the same. */
  readonly version: string;
}

export interface HostWorkers {
  /** `perHost` slots per host, the hosts taken in turn. */
  readonly slots: readonly WorkerSlot[];
  close(): Promise<void>;
}

const firstLine = (text: string): string => text.trim().split('\n')[0] ?? '';

/**
 * Whether a host can run the plan's workers: Mallory runs there in this machine's version, and
 * the plan's store is the same dir there as here (a file made here, in the plan's dir, is read
 * back there): workers write their records and runs into it, and the fleet reads them here.
 * Each refusal is one line naming the host and what to do.
 */
async function checkHost(runtime: SshHost, plan: Plan, options: HostWorkersOptions): Promise<void> {
  const where = `host ${runtime.host}`;
  const command = options.malloryCommand.join(' ');
  const version = await runtime.exec([...options.malloryCommand, '--version']);
  if (version.code !== 0) {
    throw new UsageError(
      'missing-binary',
      `${where}: \`${command} --version\` failed (exit ${version.code}: ${firstLine(version.stderr) || 'no output'}): install Mallory there, or say how it runs with --mallory-command`,
    );
  }
  const theirs = firstLine(version.stdout);
  if (theirs !== options.version) {
    throw new UsageError(
      'bad-host',
      `${where}: \`${command}\` is Mallory ${theirs}, this machine's is ${options.version}: install the same version there`,
    );
  }
  const probeName = `.fleet-probe-${randomBytes(6).toString('hex')}`;
  const probeHere = join(plan.dir, probeName);
  const token = randomBytes(12).toString('hex');
  writeFileSync(probeHere, token);
  try {
    const probeThere = posix.join(dirname(options.planOnHosts), probeName);
    const seen = await runtime.exec(['cat', probeThere]);
    if (seen.code !== 0 || seen.stdout.trim() !== token) {
      throw new UsageError(
        'bad-host',
        `${where}: the plan's store is not shared with this machine (${probeThere}, written here as ${probeHere}, is not there): mount the store on every host (at the same path, or give the plan's path there with --plan-on-hosts)`,
      );
    }
  } finally {
    rmSync(probeHere, { force: true });
  }
}

/**
 * Workers on SSH hosts: every host is reached (all at once) and checked (`checkHost`) before any
 * worker starts. A worker is `mallory run --plan PLAN --index N` on its host over an SSH channel,
 * its output appended to its log here; it stops when its stdin reaches EOF — when the fleet asks it
 * to stop, and when the fleet's connection drops (the fleet killed outright).
 */
export async function hostWorkers(plan: Plan, options: HostWorkersOptions): Promise<HostWorkers> {
  const connected = await Promise.allSettled(options.targets.map((t) => connectSshHost(t)));
  const runtimes = connected.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const close = async (): Promise<void> => {
    await Promise.allSettled(runtimes.map((r) => r.close()));
  };
  try {
    const failed = connected.find((r) => r.status === 'rejected');
    if (failed) {
      const error = failed.reason as unknown;
      if (error instanceof HostError) throw new UsageError('bad-host', error.message);
      throw error;
    }
    await Promise.all(runtimes.map((runtime) => checkHost(runtime, plan, options)));
  } catch (error) {
    await close();
    throw error;
  }
  const slotOf = (runtime: SshHost): WorkerSlot => ({
    async start(index, log) {
      const argv = [
        ...options.malloryCommand,
        'run',
        '--plan',
        options.planOnHosts,
        '--index',
        String(index),
      ];
      const worker = await runtime.attach(argv, { [FLEET_WORKER_ENV]: '1' }, (chunk) => {
        appendFileSync(log, chunk);
      });
      return {
        what: `a worker on host ${runtime.host}`,
        exited: worker.exited,
        stop: () => {
          worker.closeInput();
        },
      };
    },
  });
  const slots: WorkerSlot[] = [];
  for (let round = 0; round < options.perHost; round++) slots.push(...runtimes.map(slotOf));
  return { slots, close };
}
