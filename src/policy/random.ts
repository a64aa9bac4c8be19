import type { Fault } from '../core/fault.js';
import { type DecideContext, enactableKinds, type Policy, type PolicyValue } from './policy.js';

/**
 * Jepsen's baseline: uniform over the fault kinds that can be enacted now and the no-op; the value
 * at random. Like Jepsen's random nemesis it never draws an action with nothing to act on (`resume`
 * with nothing paused), which would spend a step on nothing and flatter any policy that filters.
 */
export class RandomPolicy implements Policy {
  readonly name = 'random';

  decide(ctx: DecideContext): Fault | null {
    const kinds = enactableKinds(ctx.space);
    const i = ctx.rng.int(kinds.length + 1);
    if (i === kinds.length) return null;
    const f = kinds[i];
    return { f, value: ctx.rng.pick(ctx.space.valuesOf(f)) };
  }

  learn(): void {
    // The baseline does not learn.
  }

  save(): readonly PolicyValue[] {
    return [];
  }

  load(): void {
    // Nothing to load.
  }
}
