import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

import { NetnsBackend } from '../../src/cluster/net/netns.js';
import { processStartTime, ResourceRegistry } from '../../src/cluster/resources.js';
import { run } from '../../src/core/exec.js';

// Loaded only under vitest: the benches (`npx tsx bench/…`) import this file's makers without it.
const { afterAll, beforeAll } =
  process.env.VITEST === undefined ? { afterAll: noHook, beforeAll: noHook } : await import('vitest');

function noHook(): never {
  throw new Error('useSshHosts runs under vitest only');
}

export const SSHD = '/usr/sbin/sshd';
const SSH_PORT = 22;
const SSHD_READY_TIMEOUT_MS = 10_000;
const POLL_MS = 50;
/** This checkout: the program kvraft's nodes run (`dist/`), installed on every host as a user's hosts would have it. */
const REPO = resolve(import.meta.dirname, '..', '..');

/** Where this checkout is under /tmp (`ci-X/…`), or undefined when it is not there. */
function keptInTmp(repo: string = REPO): string | undefined {
  const inTmp = relative('/tmp', repo);
  return inTmp !== '' && !inTmp.startsWith('..') && !inTmp.startsWith('/') ? inTmp : undefined;
}

/**
 * The shell lines that give a host its own empty /tmp — a tmpfs made on /mnt, this checkout bound
 * into it at its own path when it lives under /tmp (a clean clone in /tmp, as CI makes: the hosts
 * must still have the program the nodes run), then moved onto /tmp. Run in the host's own mount
 * namespace, so nothing of it is seen outside.
 */
export function ownTmpMounts(repo: string = REPO): string[] {
  const inTmp = keptInTmp(repo);
  const keep = inTmp !== undefined;
  return [
    'mount -t tmpfs -o size=512m,mode=1777 mallory-test-host /mnt',
    ...(keep ? [`mkdir -p '/mnt/${inTmp}'`, `mount --bind '${repo}' '/mnt/${inTmp}'`] : []),
    'mount --move /mnt /tmp',
  ];
}

/** Why the SSH host tests cannot run here, or undefined when they can. */
export function sshHostsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, sshd)';
  if (!existsSync(SSHD)) return `${SSHD} is missing: apt-get install -y openssh-server`;
  return undefined;
}

/**
 * A test host's sshd_config: listening on `listen` (ip:port) with its own host key, root logging
 * in with a key of `authorizedKeys` only, no pid file (the test keeps the pid), sftp for copies.
 */
export function sshdConfig(listen: string, hostKey: string, authorizedKeys: string): string {
  return [
    `ListenAddress ${listen}`,
    `HostKey ${hostKey}`,
    `AuthorizedKeysFile ${authorizedKeys}`,
    'PidFile none',
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'StrictModes no',
    'Subsystem sftp /usr/lib/openssh/sftp-server',
    '',
  ].join('\n');
}

/** N hosts on this machine, reachable from it only over SSH. */
export interface SshHosts {
  /** Each host's address, in order. */
  readonly addresses: readonly string[];
  /** The fuzzer's private key (ed25519, no passphrase), authorized on every host for root. */
  readonly privateKey: string;
  /** A known_hosts file with every host's key. */
  readonly knownHosts: string;
  /** The network namespace of host i (for checks the test makes from outside, e.g. iptables). */
  namespace(i: number): string;
  /** Runs a command inside host i (its network and, with `ownTmp`, its own /tmp). */
  inHost(i: number, argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * With `ownTmp`, the mounts in host i's own mount namespace that were not there when it started
   * (read from its sshd's /proc/PID/mounts); without, none (the host shares this machine's mounts,
   * and other tests' with them).
   */
  newMounts(i: number): string[];
  /** Ends host i's sshd (its connection is refused from then on). */
  stopSshd(i: number): Promise<void>;
  close(): Promise<void>;
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

async function keygen(file: string): Promise<void> {
  const result = await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', file]);
  if (result.code !== 0) throw new Error(`ssh-keygen failed: ${result.stderr}`);
}

export interface SshHostsOptions {
  /**
   * Each host gets its own empty /tmp (a tmpfs in a mount namespace of its sshd's own, gone with
   * it), so a file the fuzzer wrote under /tmp is on a host only if it was copied there. `dir`
   * must then be outside /tmp: sshd reads its keys from there.
   */
  readonly ownTmp?: boolean;
  /**
   * Dirs every host sees empty (a tmpfs over each, in a mount namespace of its sshd's own): a host
   * without a package's files, e.g. libfaketime's.
   */
  readonly hidden?: readonly string[];
}

/**
 * Makes `count` hosts: network namespaces on a bridge (the project's netns backend), each running
 * Debian's sshd on its own config and host key, with one authorized key for root. Everything is
 * in `registry` (namespaces, sshd processes); `dir` holds the keys and configs.
 */
export async function makeSshHosts(
  count: number,
  dir: string,
  registry: ResourceRegistry,
  runId: string,
  options: SshHostsOptions = {},
): Promise<SshHosts> {
  if (options.ownTmp === true && (dir === '/tmp' || dir.startsWith('/tmp/'))) {
    throw new Error(`makeSshHosts: with ownTmp the keys dir must be outside /tmp (got ${dir})`);
  }
  const names = Array.from({ length: count }, (_, i) => `h${i + 1}`);
  const network = await NetnsBackend.create({ runId, nodes: names, services: { ssh: SSH_PORT }, registry });
  const sshds: { pid: number; id: number }[] = [];
  /** Each host's mounts when its sshd listened (with `ownTmp`). */
  const mountsAtStart: Set<string>[] = [];
  const mountsOf = (pid: number): string[] => {
    try {
      return readFileSync(`/proc/${pid}/mounts`, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
    } catch {
      return [];
    }
  };
  try {
    mkdirSync(dir, { recursive: true });
    // sshd's privilege separation dir, as the package's service would make it.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    const privateKey = join(dir, 'id_ed25519');
    await keygen(privateKey);
    const authorized = join(dir, 'authorized_keys');
    writeFileSync(authorized, readFileSync(`${privateKey}.pub`), { mode: 0o600 });
    const known: string[] = [];
    for (const [i, name] of names.entries()) {
      const ip = network.nodeIp(name);
      const hostKey = join(dir, `${name}_host_key`);
      await keygen(hostKey);
      const pub = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/);
      known.push(`${ip} ${pub[0]} ${pub[1]}`);
      const config = join(dir, `${name}_sshd_config`);
      writeFileSync(config, sshdConfig(`${ip}:${SSH_PORT}`, hostKey, authorized));
      const sshd = [SSHD, '-D', '-e', '-f', config];
      // `ip netns exec`, unshare and sh each exec the next: the pid is sshd's.
      const mounts = [
        ...(options.ownTmp === true ? ownTmpMounts() : []),
        ...(options.hidden ?? []).map((d) => `mount -t tmpfs -o size=1m mallory-test-hidden '${d}'`),
      ];
      const argv =
        mounts.length > 0
          ? [
              'unshare',
              '--mount',
              '--propagation',
              'private',
              'sh',
              '-c',
              `${mounts.join(' && ')} && exec "$@"`,
              'sh',
              ...sshd,
            ]
          : sshd;
      const child = spawn('ip', ['netns', 'exec', network.namespace(name), ...argv], {
        detached: true,
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      child.unref();
      const pid = child.pid;
      if (pid === undefined) throw new Error(`sshd of ${name} did not start`);
      const id = registry.record({
        kind: 'process',
        pid,
        startTime: processStartTime(pid) ?? '',
        label: `sshd of test host ${name}`,
      });
      sshds[i] = { pid, id };
      const deadline = Date.now() + SSHD_READY_TIMEOUT_MS;
      while (!(await portOpen(ip, SSH_PORT))) {
        if (Date.now() > deadline) throw new Error(`sshd of ${name} does not listen on ${ip}:${SSH_PORT}`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      if (options.ownTmp) mountsAtStart[i] = new Set(mountsOf(pid));
    }
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, known.join('\n') + '\n');
    return {
      addresses: names.map((n) => network.nodeIp(n)),
      privateKey,
      knownHosts,
      namespace: (i) => network.namespace(names[i]),
      inHost: (i, argv) => {
        const sshd = sshds[i];
        if (!sshd) throw new Error(`no host ${i}`);
        return run(['nsenter', '-t', String(sshd.pid), '-m', '-n', '--', ...argv]);
      },
      newMounts: (i) => {
        const sshd = sshds[i];
        const before = mountsAtStart[i];
        if (!sshd || before === undefined) return [];
        return mountsOf(sshd.pid).filter((m) => !before.has(m));
      },
      stopSshd: (i) => {
        const sshd = sshds[i];
        if (sshd) registry.release(sshd.id);
        return Promise.resolve();
      },
      close: async () => {
        for (const sshd of sshds) if (sshd) registry.release(sshd.id);
        await network.close();
      },
    };
  } catch (error) {
    for (const sshd of sshds) if (sshd) registry.release(sshd.id);
    await network.close();
    throw error;
  }
}

/**
 * What host i holds besides its sshd: processes (nodes, tcpdump, a session's shells), the runs'
 * iptables rules (their `mallory-` comment), netem or prio qdiscs, and with `files` (hosts with
 * their own /tmp, empty when they start) anything under its /tmp and any mount made in it since
 * it started. The hosts are the test's own: what they hold is its runs'.
 */
export async function hostLeftovers(
  hosts: SshHosts,
  i: number,
  options: { readonly files?: boolean } = {},
): Promise<string[]> {
  const found: string[] = [];
  const pids = (await run(['ip', 'netns', 'pids', hosts.namespace(i)])).stdout
    .split('\n')
    .filter((p) => p.trim() !== '');
  for (const pid of pids) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    if (!cmd.startsWith(SSHD) && !cmd.startsWith('sshd')) found.push(`process ${pid}: ${cmd}`);
  }
  const rules = (await hosts.inHost(i, ['iptables', '-S', 'INPUT'])).stdout;
  for (const line of rules.split('\n')) if (line.includes('mallory-')) found.push(`rule: ${line}`);
  const qdiscs = (await hosts.inHost(i, ['tc', 'qdisc', 'show'])).stdout;
  for (const line of qdiscs.split('\n')) if (/netem|prio/.test(line)) found.push(`qdisc: ${line}`);
  if (options.files === true) {
    const files = (await hosts.inHost(i, ['find', '/tmp', '-mindepth', '1', '-maxdepth', '1'])).stdout;
    // The checkout a host keeps in its own /tmp (ownTmpMounts) is the host's install, not a leftover.
    const kept = keptInTmp();
    const install = kept === undefined ? undefined : join('/tmp', kept.split('/')[0]);
    for (const line of files.split('\n')) {
      if (line.trim() !== '' && line.trim() !== install) found.push(`file: ${line}`);
    }
    for (const mount of hosts.newMounts(i)) found.push(`mount: ${mount}`);
  }
  return found;
}

export interface UseSshHostsOptions extends SshHostsOptions {
  /** How many hosts (default 3). */
  readonly count?: number;
}

/** What `useSshHosts` makes: valid from its beforeAll to its afterAll. */
export interface SshHostsFixture {
  readonly hosts: SshHosts;
  /**
   * A dir of the hosts' own (their keys, sshd configs and state): outside /tmp with `ownTmp`, so
   * a file a test puts here is on every host without being copied.
   */
  readonly dir: string;
  /** `--hosts A,B,C --ssh-private-key K --known-hosts F` for them. */
  flags(): string[];
}

/**
 * A registry for test hosts named `name`, in the state dir `mallory cleanup` reads
 * (`MALLORY_STATE_DIR`, else its default) as a run's is, with `dir` (their keys, configs and
 * state) recorded first: a test process killed before its afterAll leaves the hosts' namespaces,
 * sshd processes and files for `mallory cleanup` to remove, as it does a killed run's.
 */
export function sshHostsRegistry(name: string, dir: string): ResourceRegistry {
  const registry = new ResourceRegistry(`ssh-hosts-${name}`);
  registry.record({ kind: 'dir', path: dir });
  return registry;
}

/**
 * SSH hosts for the tests of the enclosing describe (or file): made in a beforeAll, gone in an
 * afterAll. Their registry (their sshd, their namespaces, their dir) is in the state dir of this
 * process's `mallory cleanup` (`sshHostsRegistry`), not in any run's sandbox: a sandboxed run's
 * `mallory cleanup` never touches the hosts, and a killed test run's hosts are removed by a plain
 * `mallory cleanup`. Does nothing where the
 * hosts cannot be made (`sshHostsUnavailable`): the tests using them are skipped there. A test's
 * own afterAll declared after this call runs first (vitest runs after-hooks in reverse), while the
 * hosts are still there: the place for `mallory cleanup` of a failed test's run.
 */
export function useSshHosts(name: string, options: UseSshHostsOptions = {}): SshHostsFixture {
  let hosts: SshHosts | undefined;
  let registry: ResourceRegistry | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    if (sshHostsUnavailable() !== undefined) return;
    // With their own /tmp, sshd reads its keys from outside it.
    dir = mkdtempSync(join(options.ownTmp === true ? '/var/tmp' : tmpdir(), 'mallory-ssh-hosts-'));
    const id = `${name}${process.pid}`;
    registry = sshHostsRegistry(id, dir);
    hosts = await makeSshHosts(options.count ?? 3, join(dir, 'keys'), registry, id, options);
  });
  afterAll(async () => {
    await hosts?.close();
    registry?.releaseAll();
  });
  const made = (): SshHosts => {
    if (hosts === undefined) throw new Error('useSshHosts: the hosts are made in beforeAll');
    return hosts;
  };
  return {
    get hosts() {
      return made();
    },
    get dir() {
      if (dir === undefined) throw new Error('useSshHosts: the hosts are made in beforeAll');
      return dir;
    },
    flags: () => [
      '--hosts',
      made().addresses.join(','),
      '--ssh-private-key',
      made().privateKey,
      '--known-hosts',
      made().knownHosts,
    ],
  };
}
