import { hostLeftovers, sshHostsUnavailable, useSshHosts } from '../_helpers/ssh-hosts.js';
import { describeCrashPoints, SCHEDULE } from './crash-points.js';

/**
 * kvraft on three SSH hosts (namespaces running sshd, reached only over SSH, each with its own
 * /tmp): the fuzzer SIGKILLed at one point in five of a short campaign, then `mallory cleanup`:
 * nothing of the run on any host (processes, rules, qdiscs, mounts, files under its /tmp) nor on
 * this machine. The hosts are this file's own, so all they hold is what its runs made; on this
 * machine only what carries its runs' ids counts (other files' runs go on beside it).
 */
const HOSTS = 3;
const fixture = useSshHosts('crashhosts', { count: HOSTS, ownTmp: true });

describeCrashPoints({
  system: 'kvraft',
  name: 'kvraft on SSH hosts',
  schedule: SCHEDULE,
  skip: sshHostsUnavailable(),
  modes: ['kill'],
  // One point in five (each costs the hosts' connections, checks and cleanup: ~15 s).
  stride: 5,
  args: () => fixture.flags(),
  leftovers: async () =>
    (
      await Promise.all(
        Array.from({ length: HOSTS }, (_, i) => hostLeftovers(fixture.hosts, i, { files: true })),
      )
    ).flat(),
});
