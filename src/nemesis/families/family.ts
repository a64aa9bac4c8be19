import type { Clock } from '../../core/clock.js';
import type { Cluster } from '../../cluster/cluster.js';
import type { Link, NetworkBackend } from '../../cluster/net/backend.js';
import type { Fault, FaultFamily, FaultKind, FaultValue, Target } from '../../core/fault.js';
import type { Rng } from '../../core/random.js';
import type { ClusterView, SystemAdapter } from '../../systems/system.js';
import type { NodeClocks } from '../clock.js';
import type { NodeDisks } from '../disk.js';

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

/**
 * What a family's part of the reset undoes, as the Jepsen nemesis op that undoes it (`start` with
 * the nodes it restarts, `stop-partition`, `resume`, …): the reset writes it to the history.
 */
export interface HealOp {
  readonly f: FaultKind;
  readonly value: FaultValue;
}

/** The concrete nodes and links a fault acted on when it was recorded, for a replay to reuse. */
export interface Recorded {
  readonly nodes?: readonly string[];
  readonly links?: readonly Link[];
}

/** What the nemesis drives of the cluster: the `Cluster` runtime (a fake in unit tests). */
export type NemesisCluster = ClusterView &
  Pick<Cluster, 'isMember' | 'kill' | 'nodesIn' | 'setMember' | 'start' | 'statusOf' | 'waitReady'> & {
    /** Signals go over SSH to a node on another host: done when the promise is. */
    pause(node: string): void | Promise<void>;
    resume(node: string): void | Promise<void>;
    wipe(node: string): void | Promise<void>;
  };

/** What a fault family acts on and asks of the nemesis: one per run, shared by every family. */
export interface FamilyContext {
  readonly cluster: NemesisCluster;
  readonly network: Pick<NetworkBackend, 'cut' | 'degrade' | 'heal'>;
  readonly system: SystemAdapter;
  readonly rng: Rng;
  /** The nodes' clocks, when the run preloads libfaketime. */
  readonly clocks?: NodeClocks;
  /** The nodes' disks, when the run mounts the FUSE disk layer. */
  readonly disks?: NodeDisks;
  /** The time the families' own waits read (default the host's; a simulated run's is virtual). */
  readonly clock?: Clock;
  /**
   * Where the family's calls and waits stop: a fault's at the run's time budget or its stop
   * (Ctrl-C), the reset's at the run's stop. A family stops waiting there and starts nothing new.
   */
  readonly signal?: AbortSignal;
  /** The system's current leader, if it has one and answers. */
  leader(): Promise<string | undefined>;
  /**
   * The most nodes the family may leave down at once (`--faults kill:one` → 1), or undefined
   * when the run keeps it to no target.
   */
  downLimit(family: FaultFamily): number | undefined;
  /** The nodes a target names among `among` (the recorded ones when a replay gives them). */
  targetNodes(value: FaultValue, among: readonly string[], explicit?: readonly string[]): Promise<string[]>;
}

/** Whether a run offers the family's faults to its policy, and the targets it may name. */
export interface SpaceContext {
  readonly ctx: FamilyContext;
  /** `one`, `minority`, `majority`, `all`, and `leader` when the system has one. */
  readonly targets: readonly Target[];
}

/**
 * One fault family (`--faults NAME`): its kinds, the values a policy may choose for each, how each
 * is enacted, and how the reset undoes them. The nemesis routes each fault to its family.
 */
export interface FaultFamilyPackage {
  readonly family: FaultFamily;
  readonly kinds: readonly FaultKind[];
  /** Why this system cannot take the family's faults at all (checked before a run starts). */
  unsupported?(system: FamilySystem, systemName: string, nodeCount: number): string | undefined;
  /** Whether the run can offer the family to its policy (its devices exist, the cluster allows). */
  offered?(ctx: FamilyContext): boolean;
  /** The values a policy chooses among, per kind (a kind absent here takes `null`). */
  values(space: SpaceContext): Partial<Record<FaultKind, readonly FaultValue[]>>;
  enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome>;
  /**
   * Undoes every fault of the family (the reset); errors it goes on past are pushed to `errors`.
   * Returns the nodes it acted on (started, resumed, added back), when it acts on nodes one by one:
   * what the reset's record of it says, rather than what it meant to do.
   */
  heal(ctx: FamilyContext, errors: string[]): Promise<readonly string[] | undefined>;
  /** What `heal` would undo now; undefined when the family has nothing in force. */
  undoing?(ctx: FamilyContext): HealOp | undefined;
  /**
   * Whether a kind has anything to act on now. Without it: the family's undoing kind (its last)
   * when `undoing` names something in force, every other kind always.
   */
  enactable?(kind: FaultKind, ctx: FamilyContext): boolean;
}

/** A family's `enactable`, or the rule it falls back to: its undoing kind only with something in force. */
export function canEnact(family: FaultFamilyPackage, kind: FaultKind, ctx: FamilyContext): boolean {
  if (family.enactable) return family.enactable(kind, ctx);
  if (kind !== family.kinds[family.kinds.length - 1]) return true;
  return family.undoing === undefined || family.undoing(ctx) !== undefined;
}

/** The nodes at either end of some links, sorted: what healing them acts on. */
export function linkNodes(links: readonly Link[]): string[] {
  return [...new Set(links.flat())].sort();
}

/** The adapter members the families' start-time checks read. */
export type FamilySystem = Pick<SystemAdapter, 'membership' | 'clockFaults' | 'diskFaults'>;

/** Why a fault found nothing to act on (said beside every skip). */
function nothingToDo(fault: Fault): string {
  if (fault.value === 'leader') return 'no node answered as leader';
  return 'no node or link to act on in its state';
}

/** The outcome of a fault that acted on these nodes and links: skipped when it acted on none. */
export function acted(fault: Fault, nodes: readonly string[], links?: readonly Link[]): FaultOutcome {
  return nodes.length > 0 || (links?.length ?? 0) > 0
    ? { fault, nodes, ...(links ? { links } : {}), outcome: 'ok' }
    : { fault, nodes, outcome: 'skipped', error: nothingToDo(fault) };
}

/** A fault's message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
