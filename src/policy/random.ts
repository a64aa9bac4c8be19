import type { Fault } from '../core/fault.js';
import type { DecideContext, Policy, PolicyValue } from './policy.js';

/** Jepsen's baseline: uniform over the enabled fault kinds and the no-op; the value at random. */
export class RandomPolicy implements Policy {
  readonly name = 'random';

  decide(ctx: DecideContext): Fault | null {
    const { kinds } = ctx.space;
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
