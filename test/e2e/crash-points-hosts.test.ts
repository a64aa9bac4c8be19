import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll } from 'vitest';

import { ResourceRegistry } from '../../src/cluster/resources.js';
import { hostLeftovers, makeSshHosts, type SshHosts, sshHostsUnavailable } from '../_helpers/ssh-hosts.js';
import { describeCrashPoints, SCHEDULE } from './crash-points.js';

/**
 * kvraft on three SSH hosts (namespaces running sshd, reached only over SSH): the fuzzer SIGKILLed
 * at one point in five of a short campaign, then `mallory cleanup`: nothing of the run on any
 * host (processes, rules, qdiscs) nor on this machine.
 */
const unavailable = sshHostsUnavailable();
const HOSTS = 3;
let hosts: SshHosts | undefined;
let registry: ResourceRegistry | undefined;
const root = mkdtempSync(join(tmpdir(), 'mallory-crash-hosts-'));

beforeAll(async () => {
  if (unavailable !== undefined) return;
  // The hosts' own registry (their sshd, their namespaces) lives apart from the runs' state, so
  // the runs' `mallory cleanup` never touches the hosts themselves.
  const saved = process.env.MALLORY_STATE_DIR;
  process.env.MALLORY_STATE_DIR = join(root, 'hosts-state');
  mkdirSync(process.env.MALLORY_STATE_DIR, { recursive: true });
  registry = new ResourceRegistry(`crashhosts${process.pid}`);
  if (saved === undefined) delete process.env.MALLORY_STATE_DIR;
  else process.env.MALLORY_STATE_DIR = saved;
  hosts = await makeSshHosts(HOSTS, join(root, 'keys'), registry, `crashhosts${process.pid}`);
});

afterAll(async () => {
  await hosts?.close();
  registry?.releaseAll();
  rmSync(root, { recursive: true, force: true });
});

describeCrashPoints({
  system: 'kvraft',
  name: 'kvraft on SSH hosts',
  schedule: SCHEDULE,
  skip: unavailable,
  modes: ['kill'],
  // One point in five (each costs the hosts' connections, checks and cleanup: ~15 s).
  stride: 5,
  args: () => [
    '--hosts',
    hosts!.addresses.join(','),
    '--ssh-private-key',
    hosts!.privateKey,
    '--known-hosts',
    hosts!.knownHosts,
  ],
  leftovers: async () =>
    (await Promise.all(Array.from({ length: HOSTS }, (_, i) => hostLeftovers(hosts!, i)))).flat(),
});
