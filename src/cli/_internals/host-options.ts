import { type Command, Option } from 'commander';

import { HOST_KEY_CHECKING } from '../../cluster/runtime/known-hosts.js';

/** `--hosts`' help where the hosts are SSH hosts only. */
const HOSTS_HELP = 'the hosts, one node each: a file (one [user@]host[:port] a line) or h1,h2,h3';

export interface HostOptionsOptions {
  /** `--hosts`' help (default: SSH hosts only). */
  readonly hostsHelp?: string;
  /** Options of the command shown right after `--hosts`, before the SSH ones. */
  readonly afterHosts?: (command: Command) => Command;
}

/**
 * The flags that say which hosts and how to reach them over SSH, the same on every command that
 * takes them (run, doctor, replay): `--hosts`, then the SSH user, key, port, host key checking
 * and known_hosts file.
 */
export function addHostOptions(command: Command, options: HostOptionsOptions = {}): Command {
  const withHosts = command.option('--hosts <file|list>', options.hostsHelp ?? HOSTS_HELP);
  return (options.afterHosts?.(withHosts) ?? withHosts)
    .option('--username <user>', 'with --hosts: the SSH user (default root; not root: sudo -n)')
    .option('--ssh-private-key <file>', 'with --hosts: the private key (default: the SSH agent)')
    .option('--ssh-port <n>', 'with --hosts: the SSH port (default 22)')
    .addOption(
      new Option(
        '--strict-host-key-checking <mode>',
        'with --hosts: check host keys against known_hosts (yes), add unknown ones on first use (accept-new), or not at all (no)',
      ).choices(HOST_KEY_CHECKING),
    )
    .option('--known-hosts <file>', 'with --hosts: the known_hosts file (default ~/.ssh/known_hosts)');
}
