import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll } from 'vitest';

import { ResourceRegistry } from '../../src/cluster/resources.js';
import { hostLeftovers, makeSshHosts, type SshHosts, sshHostsUnavailable } from '../_helpers/ssh-hosts.js';
import { describeCrashPoints, SCHEDULE } from './crash-points.js';

/**
 * kvraft on three SSH hosts (namespaces running sshd, reached only over SSH, each with its own
 * /tmp): the fuzzer SIGKILLed at one point in five of a short campaign, then `mallory cleanup`:
 * nothing of the run on any host (processes, rules, qdiscs, mounts, files under its /tmp) nor on
 * this machine. The hosts are this file's own, so all they hold is what its runs made; on this
 * machine only what carries its runs' ids counts (other files' runs go on beside it).
 */
const unavailable = sshHostsUnavailable();
const HOSTS = 3;
let hosts: SshHosts | undefined;
let registry: ResourceRegistry | undefined;
const root = mkdtempSync(join(tmpdir(), 'mallory-crash-hosts-'));
/** Outside /tmp: each host has its own /tmp, and sshd reads its keys from here. */
let keys: string | undefined;

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
  keys = mkdtempSync('/var/tmp/mallory-e2e-keys-');
  hosts = await makeSshHosts(HOSTS, keys, registry, `crashhosts${process.pid}`, { ownTmp: true });
});

afterAll(async () => {
  await hosts?.close();
  registry?.releaseAll();
  rmSync(root, { recursive: true, force: true });
  if (keys !== undefined) rmSync(keys, { recursive: true, force: true });
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
    (
      await Promise.all(Array.from({ length: HOSTS }, (_, i) => hostLeftovers(hosts!, i, { files: true })))
    ).flat(),
});
