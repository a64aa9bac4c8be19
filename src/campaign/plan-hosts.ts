import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { findLibfaketimeOn } from '../cluster/clock-preload.js';
import { libfaketimeMissing } from '../cluster/clock-preload.js';
import { diskLayerNeedsOn } from '../cluster/disk-layer.js';
import { diskHostRefusal } from '../cluster/disk-layer.js';
import { HostsBackend } from '../cluster/net/hosts.js';
import { libraryProblem } from '../cluster/built-program.js';
import type { ClusterView, LaunchSpec } from '../cluster/node-system.js';
import { defaultKnownHosts } from '../cluster/runtime/hosts-spec.js';
import type { NodeRuntime } from '../cluster/runtime/runtime.js';
import { HostError, type SshTarget } from '../cluster/runtime/ssh.js';
import { ScratchDir } from '../cluster/scratch-dir.js';
import { UsageError } from '../core/errors.js';
import { FAMILY_KINDS } from '../core/fault.js';
import type { SystemAdapter } from '../systems/system.js';
import { HOST_FAULT_FAMILIES, type RunConfig } from './config.js';
import { isLet, readSchedule } from './schedule-file.js';
import { packetEffectsOf } from './_internals/packet-effects.js';
import { isRunnableOn } from '../cluster/runtime/files.js';

/** Whether the run's faults or its schedule files' lines include disk faults. */
function wantsDisk(config: RunConfig, nodes: readonly string[]): boolean {
  if (config.faults.includes('disk')) return true;
  return (config.schedule ?? [])
    .flatMap((file) => readSchedule(file, nodes))
    .some((item) => !isLet(item) && FAMILY_KINDS.disk.includes(item.f));
}

/**
 * Whether `node`'s host can do the run's packet faults: loss needs iptables, delay and duplication
 * netem (probed on the host). A host that cannot is refused in one line that says how to keep the
 * packet faults to loss.
 */
async function checkPacketHost(
  hosts: HostsBackend,
  node: string,
  effects: ReadonlySet<string>,
): Promise<void> {
  const runtime = hosts.runtime(node);
  if (effects.has('loss') && !(await isRunnableOn(runtime, 'iptables'))) {
    throw new UsageError(
      'missing-binary',
      `host ${runtime.host}: packet loss needs iptables there: apt-get install -y iptables on the host, or drop packet from --faults`,
    );
  }
  const needs = ['delay', 'dup'].filter((e) => effects.has(e));
  if (needs.length === 0) return;
  const missing = await hosts.netemMissing(node);
  if (missing === undefined) return;
  const what = needs.map((e) => (e === 'dup' ? 'duplication' : e)).join(' and ');
  throw new UsageError(
    'unsupported-fault',
    `host ${runtime.host}: packet faults need ${what} (tc netem), and ${missing}: load sch_netem there (modprobe sch_netem), or keep packet faults to loss with --faults packet:loss (iptables statistic rules)`,
  );
}

/**
 * Whether the node's program can run on its host: one installed there is there, one built here
 * (`LaunchSpec.built`, copied to the host at start) was built; and the shared libraries it loads
 * are on the host (`libraryProblem`).
 */
async function checkProgram(runtime: NodeRuntime, node: string, spec: LaunchSpec): Promise<void> {
  if (spec.built === true && !existsSync(spec.command)) {
    throw new UsageError(
      'missing-binary',
      `${node}'s program ${spec.command} was not built on this machine: mallory doctor --system says what the build needs`,
    );
  }
  if (spec.built !== true && !(await isRunnableOn(runtime, spec.command))) {
    throw new UsageError(
      'missing-binary',
      `host ${runtime.host}: ${node}'s command ${spec.command} is not there or not executable: install it on the host at that path`,
    );
  }
  const problem = await libraryProblem(runtime, node, spec);
  if (problem)
    throw new UsageError('missing-binary', `host ${runtime.host}: ${problem.what}: ${problem.fix}`);
}

/** The hosts of a run as SSH targets: each host's own fields, else the flags'. */
export function hostTargets(config: RunConfig): SshTarget[] {
  const knownHosts = resolve(config.knownHosts ?? defaultKnownHosts());
  return (config.hosts ?? []).map((h) => {
    const key = h.privateKey ?? config.sshPrivateKey;
    return {
      host: h.host,
      port: h.port ?? config.sshPort,
      username: h.username ?? config.sshUsername,
      privateKey: key === undefined ? undefined : resolve(key),
      knownHosts,
      strictHostKeyChecking: config.strictHostKeyChecking,
    };
  });
}

/** The hosts of a run as planned: how to reach each, and where libfaketime is on each (clock faults). */
export interface HostsPlan {
  readonly targets: SshTarget[];
  /** Node → libfaketime's path on its host, when the run has clock faults. */
  readonly libfaketime: Readonly<Record<string, string>> | undefined;
}

/**
 * What a run on hosts is refused for, before anything starts: a fault not done on hosts, a node
 * count that is not the host count; then each host is reached (the connection, the key, root) and
 * asked for its node's command and the tools the run uses there (iptables, netem, tcpdump, tar for
 * checkpoints, libfaketime when `clock` is true, and for disk faults what building and mounting the
 * FUSE layer needs). Every refusal is one line naming the host.
 */
export async function planHosts(
  config: RunConfig,
  system: SystemAdapter,
  nodes: readonly string[],
  servicePorts: Readonly<Record<string, number>>,
  clock = false,
): Promise<HostsPlan> {
  const targets = hostTargets(config);
  if (config.nodes !== undefined && config.nodes !== targets.length) {
    throw new UsageError(
      'bad-flag',
      `--nodes ${config.nodes} with ${targets.length} hosts: a run on hosts has one node per host; drop --nodes or list ${config.nodes} hosts`,
    );
  }
  for (const family of config.faults) {
    if (!(HOST_FAULT_FAMILIES as readonly string[]).includes(family)) {
      throw new UsageError(
        'unsupported-fault',
        `--faults ${family}: not done on SSH hosts: choose from ${HOST_FAULT_FAMILIES.join(',')}`,
      );
    }
  }
  const effects = packetEffectsOf(config, nodes);
  const checkpoints = config.checkpoints > 0 || config.checkpoint !== undefined;
  const disk = wantsDisk(config, nodes);
  // The check's own registry (in the state dir, as a run's): a fuzzer killed during the check
  // leaves its scratch dir and what its connections recorded to `mallory cleanup`.
  const scratchDir = new ScratchDir('hosts-check');
  const scratch = scratchDir.path;
  const registry = scratchDir.registry;
  let backend: HostsBackend | undefined;
  const libfaketime: Record<string, string> = {};
  try {
    try {
      backend = await HostsBackend.connect({
        runId: 'check',
        nodes,
        targets,
        services: servicePorts,
        registry,
      });
    } catch (error) {
      if (error instanceof HostError) throw new UsageError('bad-host', error.message);
      throw error;
    }
    const hosts = backend;
    const view: ClusterView = {
      nodes,
      members: nodes,
      runDir: scratch,
      // What launch writes for the check (a config) stays in the scratch dir, removed with it.
      dataDir: (node) => join(scratch, 'hosts', node),
      listen: (node, service) => hosts.listen(node, service),
      dial: (from, to, service) => hosts.dial(from, to, service),
      clientAddress: (node, service) => hosts.clientAddress(node, service),
    };
    const launch = (node: string): Promise<LaunchSpec> =>
      Promise.resolve(system.launch(node, view, { join: false }));
    // A program built here (dqlite-app's) is built before its libraries can be read.
    const first = await launch(nodes[0]);
    if (first.built === true && !existsSync(first.command)) await system.prepare?.(view);
    await Promise.all(
      nodes.map(async (node) => {
        const runtime = hosts.runtime(node);
        const spec = await launch(node);
        await checkProgram(runtime, node, spec);
        if (config.faults.includes('partition') && !(await isRunnableOn(runtime, 'iptables'))) {
          throw new UsageError(
            'missing-binary',
            `host ${runtime.host}: partitions need iptables there: apt-get install -y iptables on the host, or drop partition from --faults`,
          );
        }
        await checkPacketHost(hosts, node, effects);
        if (checkpoints && !(await isRunnableOn(runtime, 'tar'))) {
          throw new UsageError(
            'missing-binary',
            `host ${runtime.host}: checkpoints copy the node's data dir with tar there: apt-get install -y tar on the host, or give --checkpoints 0${config.checkpoint !== undefined ? ' and drop --from-checkpoint' : ''}`,
          );
        }
        if (clock) {
          const found = await findLibfaketimeOn(runtime);
          if (found === undefined) throw new UsageError('missing-binary', libfaketimeMissing(runtime.host));
          libfaketime[node] = found;
        }
        if (disk) {
          const missing = await diskLayerNeedsOn(runtime);
          if (missing.length > 0)
            throw new UsageError('missing-binary', diskHostRefusal(runtime.host, missing));
        }
        if (!(await isRunnableOn(runtime, 'tcpdump'))) {
          throw new UsageError(
            'missing-binary',
            `host ${runtime.host}: the messages between nodes are captured there with tcpdump: apt-get install -y tcpdump on the host`,
          );
        }
      }),
    );
  } finally {
    await backend?.close();
    scratchDir.dispose();
  }
  return { targets, libfaketime: clock ? libfaketime : undefined };
}
