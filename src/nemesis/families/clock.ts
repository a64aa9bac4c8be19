import { type ClockParams, FAMILY_KINDS, type Fault, type FaultKind, type Target } from '../../core/fault.js';
import type { NodeClocks } from '../clock.js';
import {
  acted,
  type FamilyContext,
  type FamilySystem,
  type FaultFamilyPackage,
  type FaultOutcome,
  type HealOp,
  messageOf,
  type Recorded,
} from './family.js';

type ClockMove = 'bump-clock' | 'drift-clock' | 'strobe-clock';

const CLOCK_CHOICES: Readonly<Record<ClockMove, readonly ClockParams[]>> = {
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

function requireClocks(fault: Fault, ctx: FamilyContext): NodeClocks {
  if (!ctx.clocks)
    throw new Error(`${fault.f}: this run does not preload libfaketime (enable --faults clock)`);
  return ctx.clocks;
}

/** A node's wall clock through libfaketime: `bump-clock`, `drift-clock`, `strobe-clock` / `reset-clock`. */
export class ClockFamily implements FaultFamilyPackage {
  readonly family = 'clock';
  readonly kinds = FAMILY_KINDS.clock;

  unsupported(system: FamilySystem, systemName: string): string | undefined {
    if (system.clockFaults === true) return undefined;
    return `${systemName}'s nodes do not read the wall clock through libc, so libfaketime cannot move it`;
  }

  offered(ctx: FamilyContext): boolean {
    return ctx.clocks !== undefined;
  }

  values(): Partial<Record<FaultKind, readonly ClockParams[] | readonly 'all'[]>> {
    return { ...CLOCK_CHOICES, 'reset-clock': ['all'] };
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    const clocks = requireClocks(fault, ctx);
    if (fault.f === 'reset-clock') {
      const value = fault.value === null ? 'all' : fault.value;
      const nodes = await ctx.targetNodes(value, clocks.faulted, recorded?.nodes);
      clocks.reset(nodes);
      await clocks.settled();
      return acted(fault, nodes);
    }
    const params = clockParams(fault);
    const nodes = await ctx.targetNodes(params.target, ctx.cluster.members, recorded?.nodes);
    if (fault.f === 'bump-clock') clocks.bump(nodes, params.deltaMs ?? 0);
    else if (fault.f === 'drift-clock') clocks.drift(nodes, params.rate ?? 1);
    else clocks.strobe(nodes, params.deltaMs ?? 0, params.periodMs ?? MIN_STROBE_PERIOD_MS);
    // On a node of another host the offset is in force once its control file there is written.
    await clocks.settled();
    return acted(fault, nodes);
  }

  undoing(ctx: FamilyContext): HealOp | undefined {
    const skewed = ctx.clocks?.faulted ?? [];
    return skewed.length > 0 ? { f: 'reset-clock', value: [...skewed] } : undefined;
  }

  async heal(ctx: FamilyContext, errors: string[]): Promise<undefined> {
    ctx.clocks?.reset();
    try {
      await ctx.clocks?.settled();
    } catch (error) {
      errors.push(`reset-clock: ${messageOf(error)}`);
    }
    return undefined;
  }
}
