import type { Cluster } from '../cluster/cluster.js';
import { sleep } from '../core/clock.js';
import { rethrowHarness } from '../core/errors.js';
import type { Link, NetworkBackend } from '../cluster/net/backend.js';
import {
  type ClockParams,
  FAMILY_KINDS,
  type Fault,
  type FaultFamily,
  type FaultKind,
  type FaultValue,
  type PacketParams,
  type PartitionShape,
  PARTITION_SHAPES,
  type SlowDiskParams,
  type Target,
  type TornWriteParams,
} from '../core/fault.js';
import type { Rng } from '../core/random.js';
import type { ActionSpace } from '../policy/policy.js';
import type { ClusterView, SystemAdapter } from '../systems/system.js';
import type { NodeClocks } from './clock.js';
import type { Healed, NodeDisks } from './disk.js';
import { partitionLinks, shapesFor } from './partition.js';
import { resolveTarget } from './targets.js';

/** What enacting a fault did. `skipped` when there was nothing to act on (e.g. start with none down). */
export interface FaultOutcome {
  readonly fault: Fault;
  /**
   * The fault's value with what the nemesis drew for it (`torn-write`'s cut seed), when it drew
   * anything: what a record of the fault keeps, so a replay enacts the same.
   */
  readonly value?: FaultValue;
  readonly nodes: readonly string[];
  readonly links?: readonly Link[];
  readonly outcome: 'ok' | 'skipped' | 'error';
  readonly error?: string;
}

/** One entry of a fault schedule file (`--schedule`), as bug records write it. */
export interface ScheduleEntry {
  readonly atMs: number;
  readonly f: FaultKind;
  readonly value: FaultValue;
  /** The concrete nodes the fault acted on, when it was recorded from a run. */
  readonly nodes?: readonly string[];
  /** The concrete links a partition cut, when it was recorded from a run. */
  readonly links?: readonly Link[];
  /**
   * The system's leader just before the fault, when recorded from a run: a replay whose leader
   * is another node swaps the two names in `nodes` and `links`, so the fault meets the same roles.
   */
  readonly leader?: string;
}

const MIN_MEMBERS_AFTER_REMOVE = 2;

/** Why a fault found nothing to act on (said beside every skip). */
function nothingToDo(fault: Fault): string {
  if (fault.value === 'leader') return 'no node answered as leader';
  return 'no node or link to act on in its state';
}
const RE_ADD_ATTEMPTS = 3;
const RE_ADD_READY_MS = 10_000;
const RECONCILE_ROUNDS = 2;
const RECONCILE_POLL_MS = 200;
/** How long a membership call that failed is given to show up (or not) in the committed configuration. */
const SETTLE_MS = 5_000;

const PACKET_CHOICES: readonly PacketParams[] = [
  { target: 'one', delayMs: 200 },
  { target: 'all', delayMs: 50 },
  { target: 'minority', delayMs: 500 },
  { target: 'one', lossPct: 20 },
  { target: 'minority', lossPct: 5 },
];

const CLOCK_CHOICES: Readonly<Record<'bump-clock' | 'drift-clock' | 'strobe-clock', readonly ClockParams[]>> =
  {
    'bump-clock': [
      { target: 'one', deltaMs: -60_000 },
      { target: 'one', deltaMs: 5_000 },
      { target: 'minority', deltaMs: 30_000 },
      { target: 'majority', deltaMs: -2_000 },
    ],
    'drift-clock': [
      { target: 'one', rate: 1.5 },
      { target: 'minority', rate: 0.5 },
    ],
    'strobe-clock': [
      { target: 'one', deltaMs: 10_000, periodMs: 200 },
      { target: 'minority', deltaMs: -3_000, periodMs: 1_000 },
    ],
  };
const MIN_STROBE_PERIOD_MS = 50;

const SLOW_DISK_CHOICES: readonly SlowDiskParams[] = [
  { target: 'one', delayMs: 50 },
  { target: 'minority', delayMs: 200 },
  { target: 'all', delayMs: 20 },
];
const MAX_SLOW_DISK_MS = 60_000;

/** A slow-disk fault's parameters, checked: a schedule line can hold anything. */
function slowDiskParams(fault: Fault): SlowDiskParams {
  const v = fault.value as Partial<SlowDiskParams> | null;
  const delayMs = typeof v === 'object' && v !== null && !Array.isArray(v) ? v.delayMs : undefined;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_SLOW_DISK_MS) {
    throw new Error(
      `slow-disk needs a delayMs from 0 to ${MAX_SLOW_DISK_MS}, e.g. ${JSON.stringify(SLOW_DISK_CHOICES[0])}`,
    );
  }
  return { target: v?.target ?? 'one', delayMs };
}

/** The largest cut seed `torn-write` draws (a seed is any integer from 0 to this). */
const MAX_TORN_SEED = 2 ** 31 - 1;

/**
 * A torn-write's target and cut seed, checked: a plain target (or node list) gets a seed drawn
 * from `rng`; `{target, seed}` keeps its seed (a recorded fault, replayed).
 */
function tornWriteParams(fault: Fault, rng: Rng): TornWriteParams {
  const v = fault.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return { target: (v ?? 'one') as Target | readonly string[], seed: rng.int(MAX_TORN_SEED + 1) };
  }
  const { target, seed } = v as Partial<TornWriteParams>;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > MAX_TORN_SEED) {
    throw new Error(
      `torn-write takes a target, or {"target": ..., "seed": N} with an integer seed from 0 to ${MAX_TORN_SEED}`,
    );
  }
  return { target: target ?? 'one', seed };
}

/** Faults a Jepsen user may write under Jepsen's name, and Mallory's name for each. */
const JEPSEN_NAMES: Partial<Record<FaultKind, FaultKind>> = {
  'lose-unfsynced-writes': 'lose-unfsynced',
};

/** A clock fault's parameters, checked: a schedule line can hold anything. */
function clockParams(fault: Fault): ClockParams {
  const v = fault.value;
  const params: ClockParams =
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as ClockParams)
      : { target: (typeof v === 'string' ? v : 'one') as Target };
  const need = (field: 'deltaMs' | 'rate' | 'periodMs'): number => {
    const x = params[field];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new Error(
        `${fault.f} needs a numeric ${field}, e.g. ${JSON.stringify(CLOCK_CHOICES['strobe-clock'][0])}`,
      );
    }
    return x;
  };
  if (fault.f === 'bump-clock') need('deltaMs');
  if (fault.f === 'drift-clock' && need('rate') <= 0) throw new Error('drift-clock needs a rate above 0');
  if (fault.f === 'strobe-clock') {
    need('deltaMs');
    if (need('periodMs') < MIN_STROBE_PERIOD_MS) {
      throw new Error(`strobe-clock needs periodMs of at least ${MIN_STROBE_PERIOD_MS}`);
    }
  }
  return params;
}

/** What the nemesis drives of the cluster: the `Cluster` runtime (a fake in unit tests). */
export type NemesisCluster = ClusterView &
  Pick<
    Cluster,
    | 'isMember'
    | 'kill'
    | 'nodesIn'
    | 'pause'
    | 'resume'
    | 'setMember'
    | 'start'
    | 'statusOf'
    | 'waitReady'
    | 'wipe'
  >;

/**
 * Why the nemesis cannot enact a fault kind on this system, or undefined when it can: checked
 * before a run starts, so a schedule never has a line silently skipped.
 */
export function unsupportedFault(
  f: FaultKind,
  system: Pick<SystemAdapter, 'supportsMembership' | 'clockFaults' | 'diskFaults'>,
  systemName: string,
  nodeCount: number,
): string | undefined {
  if (FAMILY_KINDS.clock.includes(f) && system.clockFaults !== true) {
    return `${systemName}'s nodes do not read the wall clock through libc, so libfaketime cannot move it`;
  }
  if (FAMILY_KINDS.disk.includes(f) && system.diskFaults !== true) {
    return `${systemName} does not take disk faults (its adapter does not declare diskFaults, so its data dir is not put under the FUSE disk layer)`;
  }
  const mallorys = JEPSEN_NAMES[f];
  if (mallorys !== undefined) return `${f} is Jepsen's name for a fault Mallory calls ${mallorys}`;
  if (!Object.values(FAMILY_KINDS).some((kinds) => kinds.includes(f))) {
    return `${f} is a Jepsen fault Mallory does not inject yet`;
  }
  if (FAMILY_KINDS.member.includes(f)) {
    if (!system.supportsMembership) return `${systemName} has no membership changes`;
    if (nodeCount < MIN_MEMBERSHIP_NODES)
      return `membership changes need at least ${MIN_MEMBERSHIP_NODES} nodes`;
  }
  return undefined;
}

const MIN_MEMBERSHIP_NODES = 3;

/** The fault catalog: enacts Jepsen-named faults on the cluster and its network. */
export class Nemesis {
  private partitioned: readonly Link[] = [];
  private packetLinks: readonly Link[] = [];

  constructor(
    private readonly cluster: NemesisCluster,
    private readonly network: Pick<NetworkBackend, 'cut' | 'degrade' | 'heal'>,
    private readonly system: SystemAdapter,
    private readonly rng: Rng,
    private readonly families: readonly FaultFamily[],
    /**
     * The nodes' clocks, when the run preloads libfaketime, and their disks, when it mounts the
     * FUSE disk layer (clock and disk faults are refused otherwise).
     */
    private readonly devices: { readonly clocks?: NodeClocks; readonly disks?: NodeDisks } = {},
  ) {}

  private get clocks(): NodeClocks | undefined {
    return this.devices.clocks;
  }

  private get disks(): NodeDisks | undefined {
    return this.devices.disks;
  }

  /** The kinds the enabled families and the system allow, with the values each accepts. */
  actionSpace(): ActionSpace {
    const targets: Target[] = ['one', 'minority', 'majority', 'all'];
    if (this.system.supportsLeader) targets.push('leader');
    const shapes: FaultValue[] = shapesFor(this.cluster.nodes.length);
    if (this.system.supportsLeader) shapes.push('leader');
    const kinds = this.families
      .filter(
        (family) =>
          family !== 'member' ||
          (this.system.supportsMembership && this.cluster.nodes.length >= MIN_MEMBERSHIP_NODES),
      )
      .filter((family) => family !== 'clock' || this.clocks !== undefined)
      .filter((family) => family !== 'disk' || this.disks !== undefined)
      .flatMap((family) => FAMILY_KINDS[family]);
    const values: Partial<Record<FaultKind, readonly FaultValue[]>> = {
      'start-partition': shapes,
      'stop-partition': [null],
      kill: targets,
      start: ['all'],
      pause: targets,
      resume: ['all'],
      'start-packet': PACKET_CHOICES,
      'stop-packet': [null],
      'member-remove': this.system.supportsLeader ? ['one', 'leader'] : ['one'],
      'member-add': ['one'],
      ...CLOCK_CHOICES,
      'reset-clock': ['all'],
      'lose-unfsynced': targets,
      'torn-write': targets,
      'fsync-error': targets,
      'slow-disk': SLOW_DISK_CHOICES,
      'disk-full': targets,
      'heal-disk': ['all'],
    };
    return { kinds, valuesOf: (kind) => values[kind] ?? [null] };
  }

  private requireClocks(fault: Fault): NodeClocks {
    if (!this.clocks)
      throw new Error(`${fault.f}: this run does not preload libfaketime (enable --faults clock)`);
    return this.clocks;
  }

  private requireDisks(fault: Fault): NodeDisks {
    if (!this.disks) throw new Error(`${fault.f}: this run has no disk layer (enable --faults disk)`);
    return this.disks;
  }

  /** The members in the system's own configuration, if it can tell. */
  private async realMembers(): Promise<readonly string[] | undefined> {
    try {
      return await this.system.configuration?.(this.cluster);
    } catch (error) {
      rethrowHarness(error);
      return undefined;
    }
  }

  /**
   * The committed configuration once some member answers for it, polling up to `withinMs`: right
   * after a membership call timed out the cluster may be busy with that very change (a slow disk, an
   * election), and "no answer" must not be read as "not a member".
   */
  private async settledMembers(withinMs: number): Promise<readonly string[] | undefined> {
    const deadline = Date.now() + withinMs;
    let real: readonly string[] | undefined;
    while ((real = await this.realMembers()) === undefined && Date.now() < deadline) {
      await sleep(RECONCILE_POLL_MS);
    }
    return real;
  }

  /** The system's current leader, if it has one and answers. */
  async leader(): Promise<string | undefined> {
    try {
      return await this.system.leader?.(this.cluster);
    } catch (error) {
      rethrowHarness(error);
      return undefined;
    }
  }

  private async targetNodes(
    value: FaultValue,
    among: readonly string[],
    explicit?: readonly string[],
  ): Promise<string[]> {
    if (explicit) return among.filter((n) => explicit.includes(n));
    const target = (Array.isArray(value) ? value : (value ?? 'one')) as Target | readonly string[];
    const leader = target === 'leader' ? await this.leader() : undefined;
    return resolveTarget(target, among, this.rng, leader);
  }

  /**
   * Enacts one fault. A fault's failure comes back as an `error` outcome; only a failure of Mallory
   * itself (`HarnessError`) throws.
   */
  async enact(fault: Fault, recorded?: Pick<ScheduleEntry, 'nodes' | 'links'>): Promise<FaultOutcome> {
    try {
      return await this.enactOrThrow(fault, recorded);
    } catch (error) {
      rethrowHarness(error);
      return {
        fault,
        nodes: [],
        outcome: 'error',
        error: error instanceof Error ? error.message : String(error),
      };
    }
  }

  private async enactOrThrow(
    fault: Fault,
    recorded?: Pick<ScheduleEntry, 'nodes' | 'links'>,
  ): Promise<FaultOutcome> {
    const c = this.cluster;
    const members = c.members;
    const done = (nodes: readonly string[], links?: readonly Link[]): FaultOutcome =>
      nodes.length > 0 || (links?.length ?? 0) > 0
        ? { fault, nodes, ...(links ? { links } : {}), outcome: 'ok' }
        : { fault, nodes, outcome: 'skipped', error: nothingToDo(fault) };
    switch (fault.f) {
      case 'start-partition': {
        let links: readonly Link[];
        if (recorded?.links) links = recorded.links;
        else if (fault.value === 'leader') {
          const leader = await this.leader();
          if (leader === undefined) return done([]);
          links = partitionLinks('isolate', members, this.rng, leader);
        } else {
          const shape = PARTITION_SHAPES.includes(fault.value as PartitionShape)
            ? (fault.value as PartitionShape)
            : 'halves';
          links = partitionLinks(shape, members, this.rng);
        }
        this.partitioned = links;
        await this.network.cut(links);
        return done([...new Set(links.flat())], links);
      }
      case 'stop-partition': {
        const had = this.partitioned;
        this.partitioned = [];
        await this.network.cut([]);
        return done([...new Set(had.flat())]);
      }
      case 'kill': {
        const nodes = await this.targetNodes(
          fault.value,
          c.nodesIn('running', 'paused').filter((n) => c.isMember(n)),
          recorded?.nodes,
        );
        await Promise.all(nodes.map((n) => c.kill(n)));
        return done(nodes);
      }
      case 'start': {
        const down = c.nodesIn('killed', 'exited').filter((n) => c.isMember(n));
        const nodes = await this.targetNodes(fault.value, down, recorded?.nodes);
        for (const n of nodes) await c.start(n);
        return done(nodes);
      }
      case 'pause': {
        const nodes = await this.targetNodes(
          fault.value,
          c.nodesIn('running').filter((n) => c.isMember(n)),
          recorded?.nodes,
        );
        for (const n of nodes) c.pause(n);
        return done(nodes);
      }
      case 'resume': {
        const nodes = await this.targetNodes(fault.value, c.nodesIn('paused'), recorded?.nodes);
        for (const n of nodes) c.resume(n);
        return done(nodes);
      }
      case 'start-packet': {
        const params = (
          typeof fault.value === 'object' && fault.value !== null && !Array.isArray(fault.value)
            ? fault.value
            : { target: 'one', delayMs: 100 }
        ) as PacketParams;
        let links: readonly Link[];
        if (recorded?.links) links = recorded.links;
        else {
          const nodes = await this.targetNodes(params.target, members);
          links = members.flatMap((a) =>
            members
              .filter((b) => a !== b && (nodes.includes(a) || nodes.includes(b)))
              .map((b): Link => [a, b]),
          );
        }
        this.packetLinks = links;
        await this.network.degrade(links, params);
        return done([...new Set(links.flat())], links);
      }
      case 'stop-packet': {
        const had = this.packetLinks;
        this.packetLinks = [];
        await this.network.degrade([], { target: 'all' });
        return done([...new Set(had.flat())]);
      }
      case 'member-remove': {
        if (members.length - 1 < MIN_MEMBERS_AFTER_REMOVE) return done([]);
        const live = members.filter((n) => c.statusOf(n) === 'running');
        const nodes = (await this.targetNodes(fault.value, live, recorded?.nodes)).slice(0, 1);
        if (nodes.length === 0 || !this.system.memberRemove) return done([]);
        const node = nodes[0];
        try {
          await this.system.memberRemove(node, c);
        } catch (error) {
          rethrowHarness(error);
          // The call failed but the change may still have committed (e.g. leadership lost after
          // appending it): then the node is out and must be stopped like any removed member.
          if ((await this.settledMembers(SETTLE_MS))?.includes(node) !== false) throw error;
        }
        c.setMember(node, false);
        await c.kill(node, 'removed');
        c.wipe(node);
        return done(nodes);
      }
      case 'member-add': {
        const removed = c.nodes.filter((n) => !c.isMember(n));
        const nodes = (await this.targetNodes(fault.value, removed, recorded?.nodes)).slice(0, 1);
        if (nodes.length === 0 || !this.system.memberAdd) return done([]);
        await this.addBack(nodes[0]);
        return done(nodes);
      }
      case 'bump-clock':
      case 'drift-clock':
      case 'strobe-clock': {
        const clocks = this.requireClocks(fault);
        const params = clockParams(fault);
        const nodes = await this.targetNodes(params.target, members, recorded?.nodes);
        if (fault.f === 'bump-clock') clocks.bump(nodes, params.deltaMs ?? 0);
        else if (fault.f === 'drift-clock') clocks.drift(nodes, params.rate ?? 1);
        else clocks.strobe(nodes, params.deltaMs ?? 0, params.periodMs ?? MIN_STROBE_PERIOD_MS);
        return done(nodes);
      }
      case 'reset-clock': {
        const clocks = this.requireClocks(fault);
        const value = fault.value === null ? 'all' : fault.value;
        const nodes = await this.targetNodes(value, clocks.faulted, recorded?.nodes);
        clocks.reset(nodes);
        return done(nodes);
      }
      case 'lose-unfsynced': {
        const disks = this.requireDisks(fault);
        const nodes = await this.targetNodes(fault.value, members, recorded?.nodes);
        // The writes are dropped only once the processes are dead: a live one could write again.
        await Promise.all(nodes.map((n) => c.kill(n)));
        await disks.loseUnfsynced(nodes);
        return done(nodes);
      }
      case 'torn-write': {
        const disks = this.requireDisks(fault);
        const params = tornWriteParams(fault, this.rng);
        const nodes = await this.targetNodes(params.target, members, recorded?.nodes);
        await Promise.all(nodes.map((n) => c.kill(n)));
        await disks.tornWrite(nodes, params.seed);
        return { ...done(nodes), value: params };
      }
      case 'fsync-error':
      case 'disk-full': {
        const disks = this.requireDisks(fault);
        const nodes = await this.targetNodes(fault.value, members, recorded?.nodes);
        if (fault.f === 'fsync-error') await disks.fsyncError(nodes);
        else await disks.full(nodes);
        return done(nodes);
      }
      case 'slow-disk': {
        const disks = this.requireDisks(fault);
        const params = slowDiskParams(fault);
        const nodes = await this.targetNodes(params.target, members, recorded?.nodes);
        await disks.slow(nodes, params.delayMs);
        return done(nodes);
      }
      case 'heal-disk': {
        const disks = this.requireDisks(fault);
        const value = fault.value === null ? 'all' : fault.value;
        const nodes = await this.targetNodes(value, disks.faulted, recorded?.nodes);
        await this.restartHealed(await disks.heal(nodes));
        return done(nodes);
      }
      default:
        return { fault, nodes: [], outcome: 'skipped', error: `${fault.f} is not supported by this nemesis` };
    }
  }

  /**
   * Starts, among the healed nodes that are still members, those a lose-unfsynced or torn-write
   * took down and those that stopped by themselves while their disk answered errors.
   */
  private async restartHealed(healed: Healed): Promise<void> {
    const c = this.cluster;
    for (const n of new Set([...healed.lost, ...healed.errored])) {
      const status = c.statusOf(n);
      const down = status === 'exited' || (status === 'killed' && healed.lost.includes(n));
      if (c.isMember(n) && down) await c.start(n);
    }
  }

  /**
   * Makes a removed node a member again with a fresh data dir, and starts it (as a joiner) only
   * once the cluster has accepted it: `memberAdd` resolved, or its call failed but the committed
   * configuration lists the node (a change can take effect after its call gave up). A joiner the
   * cluster does not list is refused — etcd exits — so otherwise the fault fails and the node stays
   * out until the next reset tries again.
   */
  private async addBack(node: string): Promise<void> {
    const c = this.cluster;
    if ((await this.realMembers())?.includes(node) !== true) {
      await c.kill(node, 'removed');
      c.wipe(node);
      try {
        await this.system.memberAdd!(node, c);
      } catch (error) {
        rethrowHarness(error);
        if ((await this.settledMembers(SETTLE_MS))?.includes(node) !== true) {
          throw new Error(
            `the cluster did not accept ${node}, so it was not started: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    }
    c.setMember(node, true);
    await c.start(node);
  }

  /** Stops and wipes the members the system no longer counts (they would disrupt elections). */
  private async dropStrayMembers(): Promise<number> {
    const c = this.cluster;
    if (!this.system.configuration || !c.nodes.some((x) => c.isMember(x))) return 0;
    const real = await this.settledMembers(RE_ADD_READY_MS);
    const stray = real ? c.nodes.filter((x) => c.isMember(x) && !real.includes(x)) : [];
    for (const n of stray) {
      await c.kill(n, 'removed');
      c.wipe(n);
      c.setMember(n, false);
    }
    return stray.length;
  }

  /**
   * Undoes every fault: puts clocks back on real time, heals disks, heals the network, resumes paused nodes, restarts killed ones and re-adds
   * removed members — in that order, so an add finds the quorum that must accept it running, and
   * a re-added node starts only once accepted (see `addBack`). Returns the errors it met (the
   * reset goes on past them), but throws a failure of Mallory itself (`HarnessError`).
   */
  async healAll(): Promise<string[]> {
    const errors: string[] = [];
    const c = this.cluster;
    this.partitioned = [];
    this.packetLinks = [];
    this.clocks?.reset();
    // Disks first: the nodes started below must find them healthy (lost nodes are killed ones).
    try {
      await this.disks?.heal();
    } catch (error) {
      rethrowHarness(error);
      errors.push(`heal-disk: ${error instanceof Error ? error.message : String(error)}`);
    }
    await this.network.heal();
    for (const n of c.nodesIn('paused')) c.resume(n);
    for (const n of c.nodesIn('killed', 'exited').filter((x) => c.isMember(x))) {
      try {
        await c.start(n);
      } catch (error) {
        rethrowHarness(error);
        errors.push(`start ${n}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // A change whose outcome we could not see may have taken effect: reconcile with the system's
    // own configuration, re-add what is missing, and check once more.
    for (let round = 0; round < RECONCILE_ROUNDS; round++) {
      const stray = await this.dropStrayMembers();
      const missing = c.nodes.filter((x) => !c.isMember(x));
      if (round > 0 && stray === 0) break;
      for (const n of missing) {
        // Adding a member needs a leader: after restarts, give the cluster time to elect one.
        for (let attempt = 1; attempt <= RE_ADD_ATTEMPTS; attempt++) {
          await c.waitReady(RE_ADD_READY_MS);
          try {
            await this.addBack(n);
            break;
          } catch (error) {
            rethrowHarness(error);
            if (attempt === RE_ADD_ATTEMPTS) {
              errors.push(`member-add ${n}: ${error instanceof Error ? error.message : String(error)}`);
            }
          }
        }
      }
      if (missing.length === 0 && stray === 0) break;
    }
    return errors;
  }
}
