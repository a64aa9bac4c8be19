import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import type { ClusterView } from '../../cluster/node-system.js';
import { docker, type DockerEndpoint } from '../../cluster/runtime/docker.js';
import { shellQuote } from '../../core/shell.js';
import { ScratchDir } from '../../cluster/scratch-dir.js';
import { UsageError } from '../../core/errors.js';
import type { SystemAdapter } from '../../systems/system.js';
import type { RunConfig } from '../config.js';

/** The containers of a run: the image and the daemon they are made on. */
export interface ContainerPlan {
  readonly image: string;
  readonly endpoint: DockerEndpoint;
}

/** What Mallory runs in a node's container besides the node (sleep keeps it alive). */
const NEEDED = ['sh', 'setsid', 'cut', 'cat', 'mkdir', 'rm', 'find', 'tail', 'env', 'sleep'];
const PROBE_TIMEOUT_MS = 60_000;

/** The docker client: `MALLORY_DOCKER`, else `docker` on PATH. */
function dockerClient(): string | undefined {
  const named = process.env.MALLORY_DOCKER;
  if (named !== undefined && named !== '') return named;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    try {
      accessSync(join(dir, 'docker'), constants.X_OK);
      return join(dir, 'docker');
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * What a run in containers is refused for, before anything is made: no docker client, no daemon
 * answering, no such image (what containers cannot do at all is refused before, by their
 * runtime's capabilities: `refuseWhatThePlaceLacks`); then one throwaway
 * container of the image (`--rm`) says whether it has the node's command, the commands Mallory
 * runs there and (with partitions) iptables. Every refusal is one line.
 */
export async function planContainers(
  config: RunConfig,
  system: SystemAdapter,
  nodes: readonly string[],
  servicePorts: Readonly<Record<string, number>>,
): Promise<ContainerPlan> {
  const image = config.containers?.image ?? '';
  const where = `--hosts docker:${image}`;
  const binary = dockerClient();
  if (binary === undefined) {
    throw new UsageError(
      'missing-binary',
      `${where}: no docker client (no docker on PATH): apt-get install -y docker.io, or name the client in MALLORY_DOCKER`,
    );
  }
  const host = config.dockerHost ?? (process.env.DOCKER_HOST || undefined);
  const endpoint: DockerEndpoint = { binary, host };
  const version = await docker(endpoint, ['version', '--format', '{{.Server.Version}}']);
  if (version.code !== 0) {
    const why = firstLine(version.stderr) ?? `exit ${version.code}`;
    throw new UsageError(
      'bad-host',
      `${where}: cannot reach the docker daemon${host !== undefined ? ` at ${host}` : ''} (${why}): start dockerd, or point --docker-host or DOCKER_HOST at its socket`,
    );
  }
  const inspected = await docker(endpoint, ['image', 'inspect', '--format', '{{.Id}}', image]);
  if (inspected.code !== 0) {
    throw new UsageError(
      'bad-host',
      `${where}: the daemon has no image ${image} (nothing is pulled): build or load it there first (docker build, docker import or docker load)`,
    );
  }
  await probeImage(config, system, nodes, servicePorts, endpoint, image, where);
  return { image, endpoint };
}

function firstLine(text: string): string | undefined {
  return text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('WARNING'));
}

/** One `docker run --rm` of the image that names what it lacks. */
async function probeImage(
  config: RunConfig,
  system: SystemAdapter,
  nodes: readonly string[],
  servicePorts: Readonly<Record<string, number>>,
  endpoint: DockerEndpoint,
  image: string,
  where: string,
): Promise<void> {
  const scratchDir = new ScratchDir('containers-check');
  const scratch = scratchDir.path;
  let command: string;
  try {
    // The command does not depend on addresses; the launch sees placeholders and a scratch dir.
    const view: ClusterView = {
      nodes,
      members: nodes,
      runDir: scratch,
      dataDir: (node) => join(scratch, node),
      listen: (_node, service) => ({ host: '0.0.0.0', port: servicePorts[service] ?? 0 }),
      dial: (_from, _to, service) => ({ host: '0.0.0.0', port: servicePorts[service] ?? 0 }),
      clientAddress: (_node, service) => ({ host: '0.0.0.0', port: servicePorts[service] ?? 0 }),
    };
    command = (await Promise.resolve(system.launch(nodes[0], view, { join: false }))).command;
  } finally {
    scratchDir.dispose();
  }
  const has = (c: string): string =>
    c.includes('/') ? `test -x ${shellQuote(c)}` : `command -v ${shellQuote(c)} >/dev/null 2>&1`;
  const checks = [...NEEDED, command].map((c) => `${has(c)} || echo "missing ${c}"`);
  const rules = ['partition', 'packet'].filter((f) => config.faults.includes(f as never));
  if (rules.length > 0) {
    checks.push(
      `{ ${has('iptables')} || ${has('xtables-nft-multi')} || ${has('xtables-legacy-multi')}; } || echo "missing iptables"`,
    );
  }
  const probe = await docker(
    endpoint,
    ['run', '--rm', '--network', 'none', '--entrypoint', 'sh', image, '-c', checks.join('; ')],
    { timeoutMs: PROBE_TIMEOUT_MS },
  );
  if (probe.code !== 0) {
    throw new UsageError(
      'bad-host',
      `${where}: a container of the image cannot run sh (${firstLine(probe.stderr) ?? `exit ${probe.code}`}): the image needs a POSIX sh`,
    );
  }
  const missing = probe.stdout
    .toString()
    .split('\n')
    .map((l) => /^missing (.+)$/.exec(l)?.[1])
    .filter((m): m is string => m !== undefined);
  if (missing.includes(command)) {
    throw new UsageError(
      'missing-binary',
      `${where}: ${nodes[0]}'s command ${command} is not in the image: build the image with ${system.name}'s node command on its PATH`,
    );
  }
  if (missing.includes('iptables')) {
    throw new UsageError(
      'missing-binary',
      `${where}: ${rules.map((f) => (f === 'packet' ? 'packet loss' : 'partitions')).join(' and ')} need${rules.length === 1 && rules[0] === 'packet' ? 's' : ''} iptables in the image: install it there (apt-get install -y iptables), or drop ${rules.join(' and ')} from --faults`,
    );
  }
  if (missing.length > 0) {
    throw new UsageError(
      'missing-binary',
      `${where}: the image lacks ${missing.join(', ')}, which Mallory runs in each node's container: add them (coreutils, util-linux, findutils)`,
    );
  }
}
