import {
  ClockPreload,
  findLibfaketime,
  LIBFAKETIME_FIX,
  type NodeClockPreload,
} from '../cluster/clock-preload.js';
import { Cluster, type NodeExit } from '../cluster/cluster.js';
import { ControlFiles } from '../cluster/clock-control-files.js';
import { buildDiskLayer, DiskLayer } from '../cluster/disk-layer.js';
import type { NetworkBackend } from '../cluster/net/backend.js';
import { ContainersBackend } from '../cluster/net/containers.js';
import { HostsBackend } from '../cluster/net/hosts.js';
import { NetnsBackend } from '../cluster/net/netns.js';
import { hasDiskLayer, type Placement } from '../cluster/placement.js';
import { localLayout } from '../cluster/runtime/local-layout.js';
import { localRuntime } from '../cluster/runtime/local.js';
import { ProxyBackend } from '../cluster/net/proxy.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import type { DurabilityContract } from '../check/durability.js';
import { LogCheck, logSizes } from '../check/logs.js';
import { monoNs } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { FAMILY_KINDS, type FaultFamily } from '../core/fault.js';
import type { Rng } from '../core/random.js';
import { CoalescedClockWriter, NodeClocks } from '../nemesis/clock.js';
import { NodeDisks } from '../nemesis/disk.js';
import { Nemesis, unsupportedFault } from '../nemesis/nemesis.js';
import type { LogTemplate } from '../observe/drain.js';
import { createPolicy } from '../policy/index.js';
import type { Policy, PolicyValue } from '../policy/policy.js';
import { readStoredSeed, type StoredSeed } from '../store/run-reader.js';
import type { RunStore } from '../store/run-store.js';
import { loadSystem } from '../systems/load-system.js';
import { resolveSettings } from '../systems/settings.js';
import type { SystemAdapter, SystemDefinition } from '../systems/system.js';
import type { History } from '../workload/history.js';
import { loadWorkload, type LoadedWorkload } from '../workload/load-workload.js';
import type { Workload } from '../workload/workload.js';
import type { ScheduleChecker } from './checker.js';
import { readCheckpoint, type CheckpointManifest } from '../store/checkpoint-files.js';
import { Checkpoints } from './checkpoints.js';
import { defaultCheckers } from './checkers.js';
import type { RunConfig } from './config.js';
import { Observation } from './observation.js';
import { isLet, readSchedule, type ScheduleItem } from './schedule-file.js';
import { prepareExchangeDir } from './exchange.js';
import { type ContainerPlan, planContainers } from './_internals/plan-containers.js';
import { refuseWhatThePlaceLacks } from './_internals/place-refusal.js';
import { planHosts } from './plan-hosts.js';
import type { RunCluster } from './run-cluster.js';
import {
  refuseSim,
  simCluster,
  simDevices,
  SimOutput,
  simWorld,
  type SimWorld,
} from './_internals/sim-parts.js';

/** Base of the ports given to services a system declares no port for (each netns node has its own address). */
const NETNS_PORT_BASE = 7000;

/** What an earlier run gives a campaign seeded from it (`--seed-from`). */
export interface Seed {
  readonly runDir: string;
  readonly status: string;
  readonly values: readonly PolicyValue[];
  readonly states: readonly { abstraction: string; id: string; features: string; visits: number }[];
  /** Its mined log templates: loaded first, so the same lines get the same ids (event types) here. */
  readonly templates: readonly LogTemplate[];
}

/**
 * A campaign as chosen before anything starts (Jepsen's test map, resolved): the system and its
 * adapter, the fixed schedule or the policy, the nodes and the seed, what the chosen faults need
 * (libfaketime, the disk layer), the network. Every refusal of the configuration comes from
 * `planRun`, before a run directory exists, so a refused run leaves nothing behind.
 */
export interface RunPlan {
  readonly definition: SystemDefinition;
  /** How the run names its system: a built-in's name, or the module's absolute path. */
  readonly source: string;
  readonly system: SystemAdapter;
  /** The client workload: a built-in, or one loaded by path (its `source` is the module's absolute path). */
  readonly workload: LoadedWorkload;
  /** The checks of each schedule: the workload's history checker (its own, or a built-in's) and the invariants. */
  readonly checkers: readonly ScheduleChecker[];
  /** The fixed schedules, one per schedule of the run in order (`--schedule`), unless a policy drives it. */
  readonly fixedSchedule: readonly (readonly ScheduleItem[])[] | undefined;
  /** The checkpoint the nodes start from (`checkpoint`), read and checked against the plan. */
  readonly startFrom: { readonly dir: string; readonly manifest: CheckpointManifest } | undefined;
  readonly nodes: readonly string[];
  readonly seed: number;
  /** The policy, unless a fixed schedule drives the run. */
  readonly policy: Policy | undefined;
  readonly seedData: Seed | undefined;
  /** Where the nodes run, with what the chosen faults need there (libfaketime, the disk layer). */
  readonly placement: Placement;
  /** Every setting the system declares, with its default where not given (`--set`). */
  readonly settings: Readonly<Record<string, string>>;
  /** The durability contract checked: the user's (`--durability`), else the system's, if any. */
  readonly durability: DurabilityContract | undefined;
  /** The simulated world the nodes run in (`--sim`), seeded by `seed`; else real processes. */
  readonly sim: SimWorld | undefined;
}

/** Loads the system, checks the configuration against it and resolves everything a run needs. */
export async function planRun(config: RunConfig): Promise<RunPlan> {
  if (config.exchange !== undefined) prepareExchangeDir(config.exchange);
  const { definition, source } = await loadSystem(config.system);
  const workload = await loadWorkload(config.workload);
  for (const bug of config.bugs) {
    if (!definition.bugs.includes(bug)) {
      throw new UsageError(
        'unknown-bug',
        `system ${definition.name} has no bug switch "${bug}": choose from ${definition.bugs.join(', ') || 'none'}`,
      );
    }
  }
  const settings = resolveSettings(definition, config.settings);
  const nodeCount = config.hosts?.length ?? config.nodes ?? definition.defaultNodes;
  const fixedSchedule = config.schedule?.map((file) => readSchedule(file, nodeNames(nodeCount)));
  const startFrom =
    config.checkpoint !== undefined ? readStart(config.checkpoint, definition.name, nodeCount) : undefined;
  const seed = config.seed ?? Math.floor(Math.random() * 2 ** 31);
  const sim =
    config.sim !== undefined ? simWorld(config, { seed, nodes: nodeCount, bugs: config.bugs }) : undefined;
  const system = sim?.system ?? definition.create({ bugs: config.bugs, settings, nodes: nodeCount });
  const durability: DurabilityContract | undefined =
    config.durability !== undefined
      ? { level: config.durability, statedBy: 'user' }
      : system.durability !== undefined
        ? { level: system.durability, statedBy: 'system' }
        : undefined;
  const unsupportedWorkload = workload.refusal(system);
  if (unsupportedWorkload !== undefined) throw new UsageError('unsupported-workload', unsupportedWorkload);
  (fixedSchedule ?? []).forEach((items, i) => {
    for (const item of items) {
      if (isLet(item)) continue;
      const reason = unsupportedFault(item.f, system, definition.name, nodeCount);
      if (reason !== undefined) {
        throw new UsageError(
          'schedule',
          `${config.schedule?.[i]}: ${item.f} at ${item.atMs} ms: ${reason}: remove the line`,
        );
      }
    }
  });
  for (const [family, targets] of Object.entries(config.faultTargets)) {
    if (targets.length === 1 && targets[0] === 'leader' && !system.leadership) {
      throw new UsageError(
        'unsupported-fault',
        `--faults ${family}:leader: system ${definition.name} names no leader (no leadership capability): choose another target`,
      );
    }
  }
  /** Whether the run enables a family, or its schedule has a line of it. */
  const wants = (family: FaultFamily): boolean =>
    config.faults.includes(family) ||
    (fixedSchedule ?? []).flat().some((item) => !isLet(item) && FAMILY_KINDS[family].includes(item.f));
  if (config.sim !== undefined) refuseSim(config, definition.name, fixedSchedule);
  else refuseWhatThePlaceLacks(config, nodeNames(nodeCount), wants);
  let libfaketime: string | undefined;
  if (wants('clock')) {
    const reason = unsupportedFault('bump-clock', system, definition.name, nodeCount);
    if (reason !== undefined) throw new UsageError('unsupported-fault', `--faults clock: ${reason}`);
    // On hosts it is looked for on each host (`planHosts`), not here; the simulator moves its own clocks.
    if (config.hosts === undefined && sim === undefined) {
      libfaketime = await findLibfaketime();
      if (libfaketime === undefined) {
        throw new UsageError('missing-binary', `clock faults need libfaketime: run ${LIBFAKETIME_FIX}`);
      }
    }
  }
  let diskLayerBinary: string | undefined;
  const diskOnHosts = wants('disk') && config.hosts !== undefined;
  if (wants('disk')) {
    const reason = unsupportedFault('lose-unfsynced', system, definition.name, nodeCount);
    if (reason !== undefined) throw new UsageError('unsupported-fault', `--faults disk: ${reason}`);
    // On hosts the layer is built on each of them (planHosts asks each whether it can); the
    // simulator's disks are its own.
    if (!diskOnHosts && sim === undefined) diskLayerBinary = await buildDiskLayer();
  }
  // In containers the system's binaries are the image's (checked there), not this machine's.
  // In the simulator the nodes are kvraft's own code in this process: no program to find.
  const problems =
    config.containers !== undefined || sim !== undefined ? [] : (await system.doctor()).filter((d) => !d.ok);
  if (problems.length > 0) {
    const p = problems[0];
    throw new UsageError('missing-binary', `${p.what}${p.fix ? `: run ${p.fix}` : ''}`);
  }
  const nodes = nodeNames(nodeCount);
  // A replay's prefix (`prefixSchedules`) is the policy's, as in the run it replays.
  const policy =
    fixedSchedule && (config.prefixSchedules ?? 0) === 0 ? undefined : createPolicy(config.policy);
  const seedData =
    policy && config.seedPolicyFrom
      ? readSeed(config.seedPolicyFrom, definition.name, policy.name)
      : undefined;
  const placement = await placeNodes(config, system, nodes, wants, { libfaketime, diskLayerBinary });
  return {
    definition,
    source,
    system,
    workload,
    checkers: defaultCheckers(config, workload),
    fixedSchedule,
    startFrom,
    nodes,
    seed,
    policy,
    seedData,
    placement,
    settings,
    durability,
    sim,
  };
}

/**
 * Where the nodes run, chosen once from the flags: on the SSH hosts (`--hosts`), in containers
 * (`--hosts docker:IMAGE`), else here. What the place cannot do was refused already
 * (`refuseWhatThePlaceLacks`).
 */
async function placeNodes(
  config: RunConfig,
  system: SystemAdapter,
  nodes: readonly string[],
  wants: (family: FaultFamily) => boolean,
  here: { readonly libfaketime: string | undefined; readonly diskLayerBinary: string | undefined },
): Promise<Placement> {
  let placement: Placement;
  if (config.sim !== undefined) {
    placement = { kind: 'sim', contract: config.sim.contract };
  } else if (config.hosts !== undefined) {
    const hosts = await planHosts(config, system, nodes, servicePorts(system), wants('clock'));
    placement = { kind: 'ssh', targets: hosts.targets, libfaketime: hosts.libfaketime, disk: wants('disk') };
  } else if (config.containers !== undefined) {
    const containers: ContainerPlan = await planContainers(config, system, nodes, servicePorts(system));
    placement = { kind: 'docker', image: containers.image, endpoint: containers.endpoint };
  } else {
    placement = { kind: 'local', netns: await wantsNetns(config, system), ...here };
  }
  return placement;
}

/** A run's live parts, built on its store and registry by `assembleRun`. */
export interface RunParts {
  readonly network: NetworkBackend;
  readonly cluster: RunCluster;
  readonly clocks: NodeClocks | undefined;
  /** The nodes' disks, when the run mounts the disk layer (the log check asks them why a node exited). */
  readonly disks: NodeDisks | undefined;
  readonly observation: Observation;
  readonly nemesis: Nemesis;
  readonly logCheck: LogCheck;
  readonly workload: Workload;
  /** The run's checkpoints, unless it takes none (`checkpoints: 0`, or a simulated run). */
  readonly checkpoints: Checkpoints | undefined;
  /** A simulated run's output, pushed from its world into the observers and the node files. */
  readonly simOutput?: SimOutput;
}

/** What the parts are built on: the run's store, registry, history and random source. */
export interface RunContext {
  readonly config: RunConfig;
  readonly store: RunStore;
  readonly registry: ResourceRegistry;
  readonly runId: string;
  readonly history: History;
  readonly rng: Rng;
  /** Hears each node exit the cluster sees. */
  readonly onExit: (exit: NodeExit) => void;
  /** The run's stop (Ctrl-C): it ends the nemesis's waits in a reset. */
  readonly signal?: AbortSignal;
}

/**
 * Builds the network, the cluster (with the clock preload and the disk layer the plan needs), the
 * observers wired to the network and the history, the nemesis, the log check and the workload —
 * nothing is started but the network and the observers. What it built before a failure is closed
 * before the error goes on.
 */
export async function assembleRun(plan: RunPlan, ctx: RunContext): Promise<RunParts> {
  if (plan.sim !== undefined) return assembleSim(plan, plan.sim, ctx);
  const { config, store, registry, history, rng } = ctx;
  const { system, nodes } = plan;
  const network = await createNetwork(plan, ctx.runId, registry);
  let observation: Observation | undefined;
  try {
    const { placement } = plan;
    const layout = network.layout?.();
    const diskLayer = hasDiskLayer(placement)
      ? new DiskLayer(
          layout ?? localLayout(ctx.runId),
          registry,
          placement.kind === 'local' ? placement.diskLayerBinary : undefined,
        )
      : undefined;
    const clock = clockParts(plan, network, store.dir);
    const cluster = new Cluster({
      system,
      nodes,
      runDir: store.dir,
      runId: ctx.runId,
      network,
      registry,
      onExit: ctx.onExit,
      ...(layout !== undefined ? { layout } : {}),
      ...(clock !== undefined ? { clock: clock.preload } : {}),
      ...(diskLayer !== undefined ? { disk: diskLayer } : {}),
    });
    const clocks = clock?.clocks;
    const disks =
      diskLayer !== undefined
        ? new NodeDisks(
            diskLayer,
            monoNs,
            (node) => logSizes(cluster.logDir(node)),
            config.tornWrites ?? system.tornWrites ?? 'sector',
          )
        : undefined;
    const watching = new Observation(store.dir, nodes, system, history.clock);
    observation = watching;
    // Before any line is read: a seeded run names the lines it shares with its seed as the seed did.
    if (plan.seedData) watching.logEvents.drain.load(plan.seedData.templates);
    await watching.watchNetwork(network, registry);
    history.onOp((_op, event) => {
      watching.ingest(event);
    });
    watching.start();
    const nemesis = new Nemesis(
      cluster,
      network,
      system,
      rng.fork('nemesis'),
      config.faults,
      {
        ...(clocks ? { clocks } : {}),
        ...(disks ? { disks } : {}),
        clock: history.clock,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      },
      config.faultTargets,
    );
    const logCheck = new LogCheck(store.dir, system.crashPatterns, system.membershipExitPatterns);
    const workload = createWorkload(plan, ctx, cluster);
    const checkpoints =
      config.checkpoints > 0
        ? new Checkpoints(store.dir, registry, {
            keep: config.checkpoints,
            capBytes: config.checkpointCapBytes,
          })
        : undefined;
    return {
      network,
      cluster,
      clocks,
      disks,
      observation: watching,
      nemesis,
      logCheck,
      workload,
      checkpoints,
    };
  } catch (error) {
    await observation?.stop().catch(() => undefined);
    await network.close().catch(() => undefined);
    throw error;
  }
}

/**
 * A simulated run's parts: the world's cluster and network, the observers fed by the world (no
 * file tails), the real nemesis, log check and workload on the world's clock; no checkpoints.
 */
function assembleSim(plan: RunPlan, world: SimWorld, ctx: RunContext): RunParts {
  const { config, store, history, rng } = ctx;
  const { system, nodes } = plan;
  const { cluster, network } = simCluster(world, store.dir, config.bugs);
  const { clocks, disks } = simDevices(world, cluster, config.tornWrites ?? system.tornWrites ?? 'sector');
  const observation = new Observation(store.dir, nodes, system, history.clock);
  if (plan.seedData) observation.logEvents.drain.load(plan.seedData.templates);
  history.onOp((_op, event) => {
    observation.ingest(event);
  });
  const simOutput = new SimOutput(world, store.dir, observation);
  const nemesis = new Nemesis(
    cluster,
    network,
    system,
    rng.fork('nemesis'),
    config.faults,
    { clock: history.clock, clocks, disks, ...(ctx.signal ? { signal: ctx.signal } : {}) },
    config.faultTargets,
  );
  return {
    network,
    cluster,
    clocks,
    disks,
    observation,
    nemesis,
    logCheck: new LogCheck(store.dir, system.crashPatterns, system.membershipExitPatterns),
    workload: createWorkload(plan, ctx, cluster),
    checkpoints: undefined,
    simOutput,
  };
}

/**
 * libfaketime in the nodes and the clocks the nemesis moves, when the run has clock faults: the
 * library and the control files where each node runs (here, in the run dir), written at once here
 * and by commands coalesced per node elsewhere.
 */
function clockParts(
  plan: RunPlan,
  network: NetworkBackend,
  runDir: string,
): { readonly preload: NodeClockPreload; readonly clocks: NodeClocks } | undefined {
  const { placement } = plan;
  if (placement.kind === 'docker' || placement.kind === 'sim' || placement.libfaketime === undefined)
    return undefined;
  const library = placement.libfaketime;
  const layout = network.layout?.();
  const runtimeOf = layout?.runtimeOf.bind(layout) ?? (() => localRuntime());
  const root = layout?.root ?? runDir;
  const files = new ControlFiles(root, runtimeOf);
  const libraryOf = (node: string): string => {
    const found = typeof library === 'string' ? library : library[node];
    if (found === undefined) throw new Error(`no libfaketime found for ${node}'s host`);
    return found;
  };
  const here = plan.nodes.length > 0 && files.isHere(plan.nodes[0]);
  return {
    preload: new ClockPreload(libraryOf, files, runtimeOf),
    clocks: new NodeClocks(
      here ? root : new CoalescedClockWriter((node, offsetMs) => files.write(node, offsetMs)),
    ),
  };
}

/** The client workload the configuration names (a built-in or one loaded by path), on this cluster. */
function createWorkload(plan: RunPlan, ctx: RunContext, cluster: RunCluster): Workload {
  const { config, history } = ctx;
  return plan.workload.definition.create({
    system: plan.system,
    cluster,
    history,
    rng: ctx.rng.fork('workload'),
    concurrency: config.concurrency ?? 2 * plan.nodes.length,
    rate: config.rate,
    timeoutMs: config.opTimeoutMs,
  });
}

/**
 * Reads what seeds this campaign from an earlier run of the same system and policy: the policy's
 * values and the states it saw (with their visits). Read before this run's store exists, so a
 * bad `--seed-from` leaves nothing behind.
 */
function readSeed(runDir: string, system: string, policy: string): Seed {
  let source: StoredSeed;
  try {
    source = readStoredSeed(runDir, policy);
  } catch {
    throw new UsageError(
      'bad-flag',
      `--seed-from: ${runDir} is not a run directory (no run.db): give store/<system>/<run>`,
    );
  }
  const run = source.run;
  if (!run || run.system !== system || run.policy !== policy) {
    throw new UsageError(
      'bad-flag',
      `--seed-from: ${runDir} is a ${run?.policy ?? '?'} run on ${run?.system ?? '?'}; this is ${policy} on ${system}: seed from a run of the same system and policy`,
    );
  }
  return {
    runDir,
    status: run.status,
    values: source.values,
    states: source.states,
    templates: source.templates,
  };
}

/** Whether the run uses namespaces; checked before the run dir exists, so a refusal leaves no run. */
async function wantsNetns(config: RunConfig, system: SystemAdapter): Promise<boolean> {
  const wanted = config.network;
  // auto: namespaces for the real systems (they declare their ports) when we are root.
  const useNetns =
    wanted === 'netns' || (wanted === 'auto' && system.ports !== undefined && process.getuid?.() === 0);
  if (useNetns) {
    const availability = await NetnsBackend.available();
    if (!availability.ok) throw new UsageError('no-netns', availability.reason);
  }
  return useNetns;
}

function createNetwork(plan: RunPlan, runId: string, registry: ResourceRegistry): Promise<NetworkBackend> {
  const { system, nodes, seed } = plan;
  const pinned = plan.startFrom?.manifest.network;
  const { placement } = plan;
  if (placement.kind === 'ssh') {
    return HostsBackend.connect({
      runId,
      nodes,
      targets: placement.targets,
      services: servicePorts(system),
      registry,
    });
  }
  if (placement.kind === 'docker') {
    return ContainersBackend.create({
      runId,
      nodes,
      image: placement.image,
      endpoint: placement.endpoint,
      services: servicePorts(system),
      registry,
    });
  }
  if (placement.kind === 'sim') throw new Error('a simulated run takes its network from its world');
  if (placement.netns) {
    return NetnsBackend.create({
      runId,
      ...(pinned?.kind === 'netns' ? { subnet: pinned.subnet } : {}),
      nodes,
      services: servicePorts(system),
      peerServices: system.peerServices,
      registry,
    });
  }
  return ProxyBackend.create({
    nodes,
    services: system.services,
    peerServices: system.peerServices,
    seed,
    ...(pinned?.kind === 'proxy' && pinned.ports !== undefined ? { pinned: pinned.ports } : {}),
  });
}

/**
 * The checkpoint a run starts from, checked before the run dir exists: it must be whole and taken
 * of the same system with the same nodes.
 */
function readStart(
  dir: string,
  system: string,
  nodeCount: number,
): { readonly dir: string; readonly manifest: CheckpointManifest } {
  const lookup = readCheckpoint(dir);
  if (!lookup.found)
    throw new UsageError('no-checkpoint', `cannot start from a checkpoint: ${lookup.reason}`);
  const { manifest } = lookup;
  const names = nodeNames(nodeCount);
  const same = manifest.nodes.length === names.length && manifest.nodes.every((n, i) => n.node === names[i]);
  if (manifest.system !== system || !same) {
    throw new UsageError(
      'no-checkpoint',
      `${dir} is a checkpoint of ${manifest.system} with nodes ${manifest.nodes.map((n) => n.node).join(',')}; this run is ${system} with ${names.join(',')}`,
    );
  }
  return { dir, manifest };
}

export function servicePorts(system: SystemAdapter): Record<string, number> {
  return Object.fromEntries(system.services.map((s, i) => [s, system.ports?.[s] ?? NETNS_PORT_BASE + i]));
}

function nodeNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `n${i + 1}`);
}
