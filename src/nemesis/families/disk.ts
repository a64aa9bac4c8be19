import { rethrowHarness } from '../../core/errors.js';
import type { Rng } from '../../core/random.js';
import {
  FAMILY_KINDS,
  type Fault,
  type FaultKind,
  type FaultValue,
  type SlowDiskParams,
  type Target,
  TORN_GRANULARITIES,
  type TornGranularity,
  type TornWriteParams,
} from '../../core/fault.js';
import type { Healed, NodeDisks } from '../disk.js';
import {
  acted,
  type FamilyContext,
  type FamilySystem,
  type FaultFamilyPackage,
  type FaultOutcome,
  type HealOp,
  messageOf,
  type Recorded,
  type SpaceContext,
} from './family.js';

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
 * A torn-write's target, cut seed and granularity, checked: a plain target (or node list) gets a
 * seed drawn from `rng` and the run's granularity; `{target, seed, granularity?}` keeps its seed
 * (a recorded fault, replayed) and its granularity (else the run's).
 */
function tornWriteParams(fault: Fault, rng: Rng, runGranularity: TornGranularity): TornWriteParams {
  const v = fault.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return {
      target: (v ?? 'one') as Target | readonly string[],
      seed: rng.int(MAX_TORN_SEED + 1),
      granularity: runGranularity,
    };
  }
  const { target, seed, granularity } = v as Partial<TornWriteParams>;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > MAX_TORN_SEED) {
    throw new Error(
      `torn-write takes a target, or {"target": ..., "seed": N} with an integer seed from 0 to ${MAX_TORN_SEED}`,
    );
  }
  if (granularity !== undefined && !TORN_GRANULARITIES.includes(granularity)) {
    throw new Error(
      `torn-write's granularity is ${TORN_GRANULARITIES.join(' or ')}, not ${JSON.stringify(granularity)}`,
    );
  }
  return { target: target ?? 'one', seed, granularity: granularity ?? runGranularity };
}

function requireDisks(fault: Fault, ctx: FamilyContext): NodeDisks {
  if (!ctx.disks) throw new Error(`${fault.f}: this run has no disk layer (enable --faults disk)`);
  return ctx.disks;
}

/**
 * Starts, among the healed nodes that are still members, those a lose-unfsynced or torn-write
 * took down and those that stopped by themselves while their disk answered errors.
 */
async function restartHealed(ctx: FamilyContext, healed: Healed): Promise<void> {
  const c = ctx.cluster;
  for (const n of new Set([...healed.lost, ...healed.errored])) {
    const status = c.statusOf(n);
    const down = status === 'exited' || (status === 'killed' && healed.lost.includes(n));
    if (c.isMember(n) && down) await c.start(n);
  }
}

/**
 * A node's disk through the FUSE layer: `lose-unfsynced`, `torn-write`, `fsync-error`, `slow-disk`,
 * `disk-full` / `heal-disk`.
 */
export class DiskFamily implements FaultFamilyPackage {
  readonly family = 'disk';
  readonly kinds = FAMILY_KINDS.disk;

  unsupported(system: FamilySystem, systemName: string): string | undefined {
    if (system.diskFaults === true) return undefined;
    return `${systemName} does not take disk faults (its adapter does not declare diskFaults, so its data dir is not put under the FUSE disk layer)`;
  }

  offered(ctx: FamilyContext): boolean {
    return ctx.disks !== undefined;
  }

  values({ ctx, targets }: SpaceContext): Record<string, readonly FaultValue[]> {
    const lacks = new Set(ctx.disks?.lacks ?? []);
    const all: Record<string, readonly FaultValue[]> = {
      'lose-unfsynced': targets,
      'torn-write': targets,
      'fsync-error': targets,
      'slow-disk': SLOW_DISK_CHOICES,
      'disk-full': targets,
      'heal-disk': ['all'],
    };
    // A kind with no value is not offered (one absent would take `null`).
    return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, lacks.has(k as FaultKind) ? [] : v]));
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    const disks = requireDisks(fault, ctx);
    const c = ctx.cluster;
    switch (fault.f) {
      case 'lose-unfsynced': {
        const nodes = await ctx.targetNodes(fault.value, c.members, recorded?.nodes);
        // The writes are dropped only once the processes are dead: a live one could write again.
        await Promise.all(nodes.map((n) => c.kill(n)));
        await disks.loseUnfsynced(nodes);
        return acted(fault, nodes);
      }
      case 'torn-write': {
        const params = tornWriteParams(fault, ctx.rng, disks.tornGranularity);
        const nodes = await ctx.targetNodes(params.target, c.members, recorded?.nodes);
        await Promise.all(nodes.map((n) => c.kill(n)));
        await disks.tornWrite(nodes, params.seed, params.granularity);
        return { ...acted(fault, nodes), value: params };
      }
      case 'fsync-error':
      case 'disk-full': {
        const nodes = await ctx.targetNodes(fault.value, c.members, recorded?.nodes);
        if (fault.f === 'fsync-error') await disks.fsyncError(nodes);
        else await disks.full(nodes);
        return acted(fault, nodes);
      }
      case 'slow-disk': {
        const params = slowDiskParams(fault);
        const nodes = await ctx.targetNodes(params.target, c.members, recorded?.nodes);
        await disks.slow(nodes, params.delayMs);
        return acted(fault, nodes);
      }
      default: {
        const value = fault.value === null ? 'all' : fault.value;
        const nodes = await ctx.targetNodes(value, disks.faulted, recorded?.nodes);
        await restartHealed(ctx, await disks.heal(nodes));
        return acted(fault, nodes);
      }
    }
  }

  undoing(ctx: FamilyContext): HealOp | undefined {
    const faulted = ctx.disks?.faulted ?? [];
    return faulted.length > 0 ? { f: 'heal-disk', value: [...faulted] } : undefined;
  }

  /** Before the nodes are started again: they must find their disks healthy. */
  async heal(ctx: FamilyContext, errors: string[]): Promise<undefined> {
    try {
      await ctx.disks?.heal();
    } catch (error) {
      rethrowHarness(error);
      errors.push(`heal-disk: ${messageOf(error)}`);
    }
    return undefined;
  }
}
