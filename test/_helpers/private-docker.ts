import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

import { run } from '../../src/core/exec.js';
import { mountPoints, processStartTime, type ResourceRegistry } from '../../src/cluster/resources.js';
import { docker, type DockerEndpoint } from '../../src/cluster/runtime/docker.js';

/** Debian's docker.io (not whatever other `docker` is first on PATH). */
export const DOCKER = '/usr/bin/docker';
export const DOCKERD = '/usr/sbin/dockerd';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;
const POLL_MS = 100;

/** Why the container tests cannot run here, or undefined when they can. */
export function privateDockerUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (a private dockerd)';
  if (!existsSync(DOCKERD) || !existsSync(DOCKER))
    return `${DOCKERD} is missing: apt-get install -y docker.io`;
  return undefined;
}

/** A docker daemon of the test's own: its data, state and socket in a temp dir, no iptables rules. */
export interface PrivateDocker {
  readonly endpoint: DockerEndpoint;
  /**
   * Builds image `tag` from this machine's files: a shell, coreutils, setsid, `binaries` and
   * (unless `iptables` is false) iptables, with their libraries.
   */
  buildImage(
    tag: string,
    binaries: readonly string[],
    options?: { readonly iptables?: boolean },
  ): Promise<void>;
  /** Names of the containers the daemon has (running or not). */
  containers(): Promise<string[]>;
  /** Names of the networks the daemon has, its built-in ones left out. */
  networks(): Promise<string[]>;
  close(): Promise<void>;
}

async function waitFor(what: string, timeoutMs: number, ok: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** What a node's container needs besides the system's binaries (the commands Mallory runs there). */
const BASE_BINARIES = ['/bin/sh', 'setsid', 'cut', 'cat', 'mkdir', 'rm', 'find', 'tail', 'env', 'sleep'];
const IPTABLES = 'xtables-nft-multi';

/** Under the root file system's merged /usr: /lib/x → /usr/lib/x. */
function merged(path: string): string {
  return path.replace(/^\/(bin|sbin|lib|lib64)\//, '/usr/$1/');
}

async function which(name: string): Promise<string> {
  if (name.startsWith('/')) return name;
  const found = (await run(['sh', '-c', `command -v ${name}`])).stdout.trim();
  if (found === '') throw new Error(`${name} is not installed here`);
  return found;
}

/** Copies `path` into `root` at its real path, and a symlink where it was named if that differs. */
function copyInto(root: string, path: string): void {
  const real = realpathSync(path);
  const target = join(root, real);
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(real, target);
  }
  const named = join(root, merged(path));
  if (merged(path) !== real && !existsSync(named)) {
    try {
      lstatSync(named);
    } catch {
      mkdirSync(dirname(named), { recursive: true });
      symlinkSync(real, named);
    }
  }
}

/** A root file system holding these programs, the libraries they load and iptables' extensions. */
async function buildRootfs(root: string, binaries: readonly string[], iptables: boolean): Promise<void> {
  for (const dir of [
    'etc',
    'tmp',
    'proc',
    'sys',
    'dev',
    'root',
    'run',
    'usr/bin',
    'usr/sbin',
    'usr/lib',
    'usr/lib64',
  ]) {
    mkdirSync(join(root, dir), { recursive: true });
  }
  for (const link of ['bin', 'sbin', 'lib', 'lib64']) symlinkSync(`usr/${link}`, join(root, link));
  writeFileSync(join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  writeFileSync(join(root, 'etc', 'group'), 'root:x:0:\n');
  const programs = await Promise.all(
    [...BASE_BINARIES, ...binaries, ...(iptables ? [IPTABLES] : [])].map(which),
  );
  const extensions = iptables
    ? (await run(['sh', '-c', 'ls /usr/lib/x86_64-linux-gnu/xtables/*.so'])).stdout
        .split('\n')
        .filter((l) => l !== '')
    : [];
  for (const file of [...programs, ...extensions]) {
    copyInto(root, file);
    const ldd = await run(['ldd', file]);
    for (const m of ldd.stdout.matchAll(/(\/\S+) \(0x/g)) copyInto(root, m[1]);
  }
  if (iptables) symlinkSync(realpathSync(await which(IPTABLES)), join(root, 'usr', 'sbin', 'iptables'));
  await run(['chmod', '1777', join(root, 'tmp')]);
}

/**
 * Starts dockerd with everything in `dir` (data root, exec root, socket, pid file) and no change
 * to this machine's network (no iptables rules, no forwarding, no default bridge). Recorded in
 * `registry`; `close` removes every container and network the daemon has, stops it and unmounts
 * what it left under `dir`.
 */
export async function startPrivateDocker(dir: string, registry: ResourceRegistry): Promise<PrivateDocker> {
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, 'docker.sock');
  const endpoint: DockerEndpoint = { binary: DOCKER, host: `unix://${socket}` };
  const child = spawn(
    DOCKERD,
    [
      '--data-root',
      join(dir, 'data'),
      '--exec-root',
      join(dir, 'exec'),
      '-H',
      `unix://${socket}`,
      '--pidfile',
      join(dir, 'docker.pid'),
      '--iptables=false',
      '--ip6tables=false',
      '--ip-forward=false',
      '--ip-masq=false',
      '--bridge=none',
    ],
    { detached: true, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error('dockerd did not start');
  const id = registry.record({
    kind: 'process',
    pid,
    startTime: processStartTime(pid) ?? '',
    label: 'private dockerd',
  });
  const list = async (args: readonly string[]): Promise<string[]> =>
    (await docker(endpoint, args)).stdout
      .toString()
      .split('\n')
      .filter((l) => l.trim() !== '');
  const close = async (): Promise<void> => {
    const containers = await list(['ps', '-aq']);
    if (containers.length > 0) await docker(endpoint, ['rm', '-f', ...containers]);
    await docker(endpoint, ['network', 'prune', '-f']);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone
    }
    await waitFor('dockerd did not stop', STOP_TIMEOUT_MS, () => processStartTime(pid) === undefined).catch(
      () => undefined,
    );
    registry.release(id);
    for (const point of mountPoints()
      .filter((p) => p.startsWith(`${dir}/`))
      .reverse()) {
      await run(['umount', '-l', point]);
    }
  };
  try {
    await waitFor('dockerd does not answer', READY_TIMEOUT_MS, async () => {
      return (await docker(endpoint, ['version', '--format', '{{.Server.Version}}'])).code === 0;
    });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    endpoint,
    buildImage: async (tag, binaries, options = {}) => {
      const root = join(dir, `rootfs-${tag.replace(/[^A-Za-z0-9]/g, '-')}`);
      await buildRootfs(root, binaries, options.iptables ?? true);
      const imported = await run(
        ['sh', '-c', `tar -C ${root} -c . | ${DOCKER} -H unix://${socket} import - ${tag}`],
        { timeoutMs: 120_000 },
      );
      if (imported.code !== 0) throw new Error(`docker import failed: ${imported.stderr}`);
    },
    containers: () => list(['ps', '-a', '--format', '{{.Names}}']),
    networks: async () =>
      (await list(['network', 'ls', '--format', '{{.Name}}'])).filter(
        (n) => !['bridge', 'host', 'none'].includes(n),
      ),
    close,
  };
}
