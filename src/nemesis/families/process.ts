import { rethrowHarness } from '../../core/errors.js';
import { FAMILY_KINDS, type Fault, type FaultKind, type FaultValue } from '../../core/fault.js';
import {
  acted,
  type FamilyContext,
  type FaultFamilyPackage,
  type FaultOutcome,
  type HealOp,
  messageOf,
  type Recorded,
  type SpaceContext,
} from './family.js';

/**
 * The chosen nodes cut to what the family's kept targets allow down at once (killed, exited or
 * paused members), with why when none is left.
 */
function withinLimit(
  chosen: readonly string[],
  family: 'kill' | 'pause',
  ctx: FamilyContext,
): { nodes: readonly string[]; refusal?: string } {
  const room = roomDown(family, ctx);
  if (room === undefined || chosen.length === 0) return { nodes: chosen };
  if (room > 0) return { nodes: chosen.slice(0, room) };
  const limit = ctx.downLimit(family) ?? 0;
  const c = ctx.cluster;
  const down = c.nodesIn('killed', 'exited', 'paused').filter((n) => c.isMember(n));
  return {
    nodes: [],
    refusal: `--faults keeps ${family} to at most ${limit} node(s) down at once, and ${down.join(', ')} ${down.length === 1 ? 'is' : 'are'} down`,
  };
}

/** How many more members the family's kept targets allow down; undefined when unbounded. */
function roomDown(family: 'kill' | 'pause', ctx: FamilyContext): number | undefined {
  const limit = ctx.downLimit(family);
  if (limit === undefined) return undefined;
  const c = ctx.cluster;
  const down = c.nodesIn('killed', 'exited', 'paused').filter((n) => c.isMember(n));
  return Math.max(0, limit - down.length);
}

/**
 * Whether `kill`/`pause` (`forward`) or `start`/`resume` (`undo`) has a node to act on now: a live
 * member with room under the kept targets, or a member in the state the undo ends.
 */
function processEnactable(
  family: 'kill' | 'pause',
  kind: FaultKind,
  ctx: FamilyContext,
  undoFrom: readonly ('killed' | 'exited' | 'paused')[],
): boolean {
  const c = ctx.cluster;
  if (kind === FAMILY_KINDS[family][1]) return c.nodesIn(...undoFrom).some((n) => c.isMember(n));
  const live = c.nodesIn(...(family === 'kill' ? (['running', 'paused'] as const) : (['running'] as const)));
  return live.some((n) => c.isMember(n)) && roomDown(family, ctx) !== 0;
}

/** `kill` (SIGKILL of the targets' process groups) / `start`: killed and exited members. */
export class KillFamily implements FaultFamilyPackage {
  readonly family = 'kill';
  readonly kinds = FAMILY_KINDS.kill;

  values({ targets }: SpaceContext): { kill: readonly FaultValue[]; start: FaultValue[] } {
    return { kill: targets, start: ['all'] };
  }

  enactable(kind: FaultKind, ctx: FamilyContext): boolean {
    return processEnactable('kill', kind, ctx, ['killed', 'exited']);
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    const c = ctx.cluster;
    if (fault.f === 'start') {
      const down = c.nodesIn('killed', 'exited').filter((n) => c.isMember(n));
      const nodes = await ctx.targetNodes(fault.value, down, recorded?.nodes);
      for (const n of nodes) await c.start(n);
      return acted(fault, nodes);
    }
    const live = c.nodesIn('running', 'paused').filter((n) => c.isMember(n));
    const chosen = await ctx.targetNodes(fault.value, live, recorded?.nodes);
    const { nodes, refusal } = withinLimit(chosen, 'kill', ctx);
    if (refusal !== undefined) return { fault, nodes: [], outcome: 'skipped', error: refusal };
    await Promise.all(nodes.map((n) => c.kill(n)));
    return acted(fault, nodes);
  }

  undoing(ctx: FamilyContext): HealOp | undefined {
    const c = ctx.cluster;
    const down = c.nodesIn('killed', 'exited').filter((x) => c.isMember(x));
    return down.length > 0 ? { f: 'start', value: down } : undefined;
  }

  /**
   * Starts every member that is down (the pause family has resumed the paused ones first); returns
   * the nodes it started (not one another start got to first).
   */
  async heal(ctx: FamilyContext, errors: string[]): Promise<readonly string[]> {
    const c = ctx.cluster;
    const started: string[] = [];
    for (const n of c.nodesIn('killed', 'exited').filter((x) => c.isMember(x))) {
      try {
        if ((await c.start(n)) === 'started') started.push(n);
      } catch (error) {
        rethrowHarness(error);
        errors.push(`start ${n}: ${messageOf(error)}`);
      }
    }
    return started;
  }
}

/** `pause` (SIGSTOP of the targets' process groups) / `resume`. */
export class PauseFamily implements FaultFamilyPackage {
  readonly family = 'pause';
  readonly kinds = FAMILY_KINDS.pause;

  values({ targets }: SpaceContext): { pause: readonly FaultValue[]; resume: FaultValue[] } {
    return { pause: targets, resume: ['all'] };
  }

  enactable(kind: FaultKind, ctx: FamilyContext): boolean {
    return processEnactable('pause', kind, ctx, ['paused']);
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    const c = ctx.cluster;
    const among =
      fault.f === 'resume' ? c.nodesIn('paused') : c.nodesIn('running').filter((n) => c.isMember(n));
    const chosen = await ctx.targetNodes(fault.value, among, recorded?.nodes);
    const { nodes, refusal } = fault.f === 'resume' ? { nodes: chosen } : withinLimit(chosen, 'pause', ctx);
    if (refusal !== undefined) return { fault, nodes: [], outcome: 'skipped', error: refusal };
    for (const n of nodes) {
      if (fault.f === 'resume') await c.resume(n);
      else await c.pause(n);
    }
    return acted(fault, nodes);
  }

  undoing(ctx: FamilyContext): HealOp | undefined {
    const paused = ctx.cluster.nodesIn('paused');
    return paused.length > 0 ? { f: 'resume', value: paused } : undefined;
  }

  async heal(ctx: FamilyContext): Promise<readonly string[]> {
    const paused = ctx.cluster.nodesIn('paused');
    for (const n of paused) await ctx.cluster.resume(n);
    return paused;
  }
}
