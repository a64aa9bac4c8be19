import { rethrowHarness } from '../../core/errors.js';
import { FAMILY_KINDS, type Fault, type FaultValue } from '../../core/fault.js';
import {
  acted,
  type FamilyContext,
  type FaultFamilyPackage,
  type FaultOutcome,
  messageOf,
  type Recorded,
  type SpaceContext,
} from './family.js';

/** `kill` (SIGKILL of the targets' process groups) / `start`: killed and exited members. */
export class KillFamily implements FaultFamilyPackage {
  readonly family = 'kill';
  readonly kinds = FAMILY_KINDS.kill;

  values({ targets }: SpaceContext): { kill: readonly FaultValue[]; start: FaultValue[] } {
    return { kill: targets, start: ['all'] };
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
    const nodes = await ctx.targetNodes(fault.value, live, recorded?.nodes);
    await Promise.all(nodes.map((n) => c.kill(n)));
    return acted(fault, nodes);
  }

  /** Starts every member that is down (the pause family has resumed the paused ones first). */
  async heal(ctx: FamilyContext, errors: string[]): Promise<void> {
    const c = ctx.cluster;
    for (const n of c.nodesIn('killed', 'exited').filter((x) => c.isMember(x))) {
      try {
        await c.start(n);
      } catch (error) {
        rethrowHarness(error);
        errors.push(`start ${n}: ${messageOf(error)}`);
      }
    }
  }
}

/** `pause` (SIGSTOP of the targets' process groups) / `resume`. */
export class PauseFamily implements FaultFamilyPackage {
  readonly family = 'pause';
  readonly kinds = FAMILY_KINDS.pause;

  values({ targets }: SpaceContext): { pause: readonly FaultValue[]; resume: FaultValue[] } {
    return { pause: targets, resume: ['all'] };
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    const c = ctx.cluster;
    const among =
      fault.f === 'resume' ? c.nodesIn('paused') : c.nodesIn('running').filter((n) => c.isMember(n));
    const nodes = await ctx.targetNodes(fault.value, among, recorded?.nodes);
    for (const n of nodes) {
      if (fault.f === 'resume') await c.resume(n);
      else await c.pause(n);
    }
    return acted(fault, nodes);
  }

  async heal(ctx: FamilyContext): Promise<void> {
    for (const n of ctx.cluster.nodesIn('paused')) await ctx.cluster.resume(n);
  }
}
