import { type Clock, realClock } from '../core/clock.js';
import { rethrowHarness } from '../core/errors.js';
import { cutMessage, untilAborted } from '../core/fault-call.js';
import type { Link } from '../cluster/net/backend.js';
import {
  FAMILY_KINDS,
  type Fault,
  type FaultFamily,
  type FaultKind,
  type FaultValue,
  type Target,
} from '../core/fault.js';
import type { Rng } from '../core/random.js';
import type { ActionSpace } from '../policy/policy.js';
import type { SystemAdapter } from '../systems/system.js';
import type { NodeClocks } from './clock.js';
import type { NodeDisks } from './disk.js';
import { ClockFamily } from './families/clock.js';
import { DiskFamily } from './families/disk.js';
import {
  canEnact,
  type FamilyContext,
  type FamilySystem,
  type FaultFamilyPackage,
  type FaultOutcome,
  type HealOp,
  messageOf,
  type NemesisCluster,
  type Recorded,
} from './families/family.js';
import { MemberFamily } from './families/member.js';
import { PacketFamily } from './families/packet.js';
import { PartitionFamily } from './families/partition.js';
import { KillFamily, PauseFamily } from './families/process.js';
import { resolveTarget } from './targets.js';
import { downLimit, keepTargets } from './target-limits.js';
import type { FaultTargets } from '../core/fault-targets.js';

export type { FaultOutcome, HealOp, NemesisCluster } from './families/family.js';

/**
 * Hears each family's part of a reset: before it (`invoke`, what it means to undo) and after it
 * (`done`, what it undid: the nodes it started, resumed or added back), with its errors.
 */
export type HealJournal = (phase: 'invoke' | 'done', op: HealOp, errors?: readonly string[]) => void;

/** The last reset (or heal-all): what each family undid, on which nodes, and the errors it met. */
export interface HealRecord {
  /** Wall-clock ms when it ended. */
  readonly endedAtMs: number;
  readonly ms: number;
  readonly ops: readonly HealOp[];
  readonly errors: readonly string[];
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

/**
 * How long a reset waits for a fault call that was cut short (at the budget, or by Ctrl-C) to
 * settle before it heals: the call was told to stop, and what it did by then is healed with the
 * rest; one that ignores its signal is not waited for longer.
 */
const CUT_CALL_SETTLE_MS = 2_000;

/** The nodes some heal ops name (a partition's heal names the nodes of its links). */
function healedNodes(ops: readonly HealOp[]): string[] {
  const nodes = ops.flatMap((op) => (Array.isArray(op.value) ? (op.value as unknown[]) : []));
  return [...new Set(nodes.filter((n): n is string => typeof n === 'string'))].sort();
}

/**
 * Every fault family, in the order the reset undoes them: clocks back on real time and disks healed
 * before any node starts, the network healed, paused nodes resumed, killed ones started, and
 * removed members re-added last, so an add finds the quorum that must accept it running.
 */
function allFamilies(): FaultFamilyPackage[] {
  return [
    new ClockFamily(),
    new DiskFamily(),
    new PartitionFamily(),
    new PacketFamily(),
    new PauseFamily(),
    new KillFamily(),
    new MemberFamily(),
  ];
}

/** The family package a fault kind belongs to, over a fresh set (for start-time checks). */
const FAMILY_OF_KIND: ReadonlyMap<FaultKind, FaultFamilyPackage> = new Map(
  allFamilies().flatMap((p) => p.kinds.map((k): [FaultKind, FaultFamilyPackage] => [k, p])),
);

/** Faults a Jepsen user may write under Jepsen's name, and Mallory's name for each. */
const JEPSEN_NAMES: Partial<Record<FaultKind, FaultKind>> = {
  'lose-unfsynced-writes': 'lose-unfsynced',
};

/**
 * Why the nemesis cannot enact a fault kind on this system, or undefined when it can: checked
 * before a run starts, so a schedule never has a line silently skipped.
 */
export function unsupportedFault(
  f: FaultKind,
  system: FamilySystem,
  systemName: string,
  nodeCount: number,
): string | undefined {
  if (f === 'heal-all') return undefined; // undoes what the run's families did, whichever they are
  const family = FAMILY_OF_KIND.get(f);
  if (family === undefined) {
    const mallorys = JEPSEN_NAMES[f];
    if (mallorys !== undefined) return `${f} is Jepsen's name for a fault Mallory calls ${mallorys}`;
    return `${f} is a Jepsen fault Mallory does not inject yet`;
  }
  return family.unsupported?.(system, systemName, nodeCount);
}

/**
 * The fault catalog: routes each Jepsen-named fault to its family (`families/`), offers the
 * enabled families' faults to the policy, and undoes every family's faults at a reset.
 */
export class Nemesis {
  private readonly ctx: FamilyContext;
  private readonly packages = allFamilies();
  private readonly byKind: ReadonlyMap<FaultKind, FaultFamilyPackage>;
  private readonly leaderListeners: ((node: string) => void)[] = [];
  /**
   * The fault call or heal under way, or the last one cut short: a heal waits for it (two heals
   * would start one node twice), a cut one for at most CUT_CALL_SETTLE_MS.
   */
  private inFlight: { readonly done: Promise<unknown>; readonly cut: boolean } = {
    done: Promise.resolve(),
    cut: false,
  };
  private last: HealRecord | undefined;

  constructor(
    cluster: NemesisCluster,
    network: FamilyContext['network'],
    system: SystemAdapter,
    rng: Rng,
    private readonly families: readonly FaultFamily[],
    /**
     * The nodes' clocks, when the run preloads libfaketime, and their disks, when it mounts the
     * FUSE disk layer (clock and disk faults are refused otherwise); `clock`, the time its waits read;
     * `signal`, the run's stop (Ctrl-C), which ends the reset's waits.
     */
    devices: {
      readonly clocks?: NodeClocks;
      readonly disks?: NodeDisks;
      readonly clock?: Clock;
      readonly signal?: AbortSignal;
    } = {},
    /** The targets some families are kept to (`--faults kill:one`); a family absent takes all. */
    private readonly targets: FaultTargets = {},
  ) {
    this.byKind = new Map(
      this.packages.flatMap((p) => p.kinds.map((k): [FaultKind, FaultFamilyPackage] => [k, p])),
    );
    this.ctx = {
      cluster,
      network,
      system,
      rng,
      ...devices,
      leader: () => this.leader(),
      downLimit: (family) => downLimit(family, targets, cluster.nodes.length),
      targetNodes: (value, among, explicit) => this.targetNodes(value, among, explicit),
    };
  }

  /** The kinds the enabled families and the system allow, with the values each accepts. */
  actionSpace(): ActionSpace {
    const targets: Target[] = ['one', 'minority', 'majority', 'all'];
    if (this.ctx.system.leadership) targets.push('leader');
    const values: Partial<Record<FaultKind, readonly FaultValue[]>> = {};
    const kinds: FaultKind[] = [];
    for (const family of this.families) {
      const p = this.packages.find((x) => x.family === family);
      if (p === undefined || p.offered?.(this.ctx) === false) continue;
      const offered = keepTargets(family, p.values({ ctx: this.ctx, targets }), this.targets);
      const offeredKinds = FAMILY_KINDS[family].filter((k) => (offered[k] ?? [null]).length > 0);
      // Kept to targets this system lacks (`kill:leader` without a leader): nothing to inject.
      if (offeredKinds.length <= 1) continue;
      kinds.push(...offeredKinds);
      Object.assign(values, offered);
    }
    return {
      kinds,
      valuesOf: (kind) => values[kind] ?? [null],
      enactable: (kind) => {
        const family = this.byKind.get(kind);
        return family !== undefined && canEnact(family, kind, this.ctx);
      },
    };
  }

  /** Hears every leader the system names (the run records it as that node's role). */
  onLeader(listener: (node: string) => void): void {
    this.leaderListeners.push(listener);
  }

  /** The system's current leader, if it has one and answers. */
  async leader(): Promise<string | undefined> {
    try {
      const leader = await this.ctx.system.leadership?.leader(this.ctx.cluster);
      if (leader !== undefined) for (const listener of this.leaderListeners) listener(leader);
      return leader;
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
    const target = (Array.isArray(value) ? value : (value ?? 'one')) as Target | readonly string[];
    const leader = target === 'leader' ? await this.leader() : undefined;
    const drawn = resolveTarget(target, among, this.ctx.rng, leader);
    // A recorded line acts on its recorded nodes, but asks and draws as its run did: the fault
    // lands at the same moment, after the same question, and the draws after it are the run's
    // (in the simulator, a replayed schedule meets the world the run met). In the recorded order.
    return explicit ? explicit.filter((n) => among.includes(n)) : drawn;
  }

  /**
   * Enacts one fault. A fault's failure comes back as an `error` outcome; only a failure of Mallory
   * itself (`HarnessError`) throws. `signal` bounds the call (the run's time budget, Ctrl-C): the
   * families and the adapter's calls get it and stop there, and a call still out when it fires is
   * not waited for: it comes back at once as an `error` outcome that says it was cut short, and
   * what it did is healed by the next reset.
   */
  async enact(fault: Fault, recorded?: Recorded, signal?: AbortSignal): Promise<FaultOutcome> {
    const cut = (reason: unknown): FaultOutcome => ({
      fault,
      nodes: [],
      outcome: 'error',
      error: cutMessage(reason),
    });
    if (signal?.aborted) return cut(signal.reason);
    const call = this.enactNow(fault, this.inFlight, recorded, signal);
    this.inFlight = { done: call.catch(() => undefined), cut: false };
    if (signal === undefined) return call;
    const raced = await untilAborted(call, signal);
    if (raced.settled) return raced.value;
    this.inFlight = { ...this.inFlight, cut: true };
    return cut(raced.reason);
  }

  private async enactNow(
    fault: Fault,
    before: { readonly done: Promise<unknown>; readonly cut: boolean },
    recorded?: Recorded,
    signal?: AbortSignal,
  ): Promise<FaultOutcome> {
    const ctx: FamilyContext =
      signal !== undefined ? { ...this.ctx, signal: this.stopping(signal) } : this.ctx;
    if (fault.f === 'heal-all') {
      await this.settle(before);
      const errors = await this.healOnce(undefined, ctx);
      const nodes = healedNodes(this.last?.ops ?? []);
      return errors.length === 0
        ? { fault, nodes, outcome: 'ok' }
        : { fault, nodes, outcome: 'error', error: errors.join('; ') };
    }
    const family = this.byKind.get(fault.f);
    if (family === undefined) {
      return { fault, nodes: [], outcome: 'skipped', error: `${fault.f} is not supported by this nemesis` };
    }
    try {
      return await family.enact(fault, ctx, recorded);
    } catch (error) {
      rethrowHarness(error);
      return { fault, nodes: [], outcome: 'error', error: messageOf(error) };
    }
  }

  /** A call's signal and the run's stop, together. */
  private stopping(signal: AbortSignal): AbortSignal {
    return this.ctx.signal === undefined ? signal : AbortSignal.any([signal, this.ctx.signal]);
  }

  /**
   * Undoes every fault, family by family in the order of `allFamilies`. Returns the errors it met
   * (the reset goes on past them), but throws a failure of Mallory itself (`HarnessError`).
   * `journal` hears what each family undoes, as the Jepsen op that undoes it, before (`invoke`) and
   * after (`done`, with the errors it met): the history's record of the reset.
   */
  async healAll(journal?: HealJournal): Promise<string[]> {
    const before = this.inFlight;
    const heal = this.settle(before).then(() => this.healOnce(journal, this.ctx));
    this.inFlight = { done: heal.catch(() => undefined), cut: false };
    return heal;
  }

  /** Waits for the call or heal under way: for one cut short, at most CUT_CALL_SETTLE_MS. */
  private async settle(call: { readonly done: Promise<unknown>; readonly cut: boolean }): Promise<void> {
    if (!call.cut) {
      await call.done;
      return;
    }
    const clock = this.ctx.clock ?? realClock;
    const gaveUp = new AbortController();
    // Not past the run's stop (Ctrl-C) either.
    const until = this.ctx.signal ? AbortSignal.any([gaveUp.signal, this.ctx.signal]) : gaveUp.signal;
    await Promise.race([call.done, clock.sleep(CUT_CALL_SETTLE_MS, until)]);
    gaveUp.abort();
  }

  /** The last reset or heal-all: what it undid on which nodes (a no-recovery finding shows it). */
  lastHeal(): HealRecord | undefined {
    return this.last;
  }

  private async healOnce(journal: HealJournal | undefined, ctx: FamilyContext): Promise<string[]> {
    const now = (): number => (ctx.clock ?? realClock).nowMs();
    const begun = now();
    const errors: string[] = [];
    const ops: HealOp[] = [];
    for (const p of this.packages) {
      const undo = p.undoing?.(this.ctx);
      if (undo) journal?.('invoke', undo);
      const before = errors.length;
      const acted = await p.heal(ctx, errors);
      const done = undo && acted ? { ...undo, value: [...acted] } : undo;
      if (done) {
        ops.push(done);
        journal?.('done', done, errors.slice(before));
      }
    }
    const ended = now();
    this.last = { endedAtMs: ended, ms: ended - begun, ops, errors };
    return errors;
  }
}
