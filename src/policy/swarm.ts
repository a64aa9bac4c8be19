import type { Fault, FaultKind, FaultValue } from '../core/fault.js';
import type { Rng } from '../core/random.js';
import {
  type ActionSpace,
  type DecideContext,
  enactableKinds,
  type Policy,
  type PolicyValue,
} from './policy.js';

/**
 * `swarm`: swarm testing (Groce et al., "Swarm Testing", ISSTA 2012) over `random`. Each schedule
 * draws its own configuration: every fault kind of the space is kept with probability
 * `KEEP_CHANCE`, and every value of a kept kind too (at least one value, and at least one kind that
 * is not an undo). Within the schedule, it draws as `random` does, uniformly among the kept kinds
 * that can be enacted now and the no-op, the value uniformly among the kept ones.
 *
 * Leaving features out is what reaches deeper combinations: a schedule without `stop-partition`
 * keeps its partition while kills, restarts and pauses happen under it; one whose only partition
 * is `bridge` draws it every time it partitions. Uniform random draws each feature as often as the
 * others and undoes a fault about as often as it makes one. It learns nothing.
 */
export const KEEP_CHANCE = 0.5;

/** The kinds that undo another family's fault (what a schedule may keep active by leaving them out). */
const UNDO_KINDS: ReadonlySet<FaultKind> = new Set([
  'stop-partition',
  'start',
  'resume',
  'stop-packet',
  'member-add',
  'reset-clock',
  'heal-disk',
]);

/** A schedule's configuration: the kinds it kept, each with the values it kept. */
export type SwarmConfiguration = ReadonlyMap<FaultKind, readonly FaultValue[]>;

/** Draws a configuration of the space (see `SwarmPolicy`). */
export function drawConfiguration(space: ActionSpace, rng: Rng): SwarmConfiguration {
  if (!space.kinds.some((k) => !UNDO_KINDS.has(k)))
    return new Map(space.kinds.map((k) => [k, space.valuesOf(k)]));
  for (;;) {
    const kept = new Map<FaultKind, readonly FaultValue[]>();
    for (const kind of space.kinds) {
      if (!rng.chance(KEEP_CHANCE)) continue;
      const values = space.valuesOf(kind);
      const some = values.filter(() => rng.chance(KEEP_CHANCE));
      kept.set(kind, some.length > 0 ? some : [rng.pick(values)]);
    }
    if ([...kept.keys()].some((k) => !UNDO_KINDS.has(k))) return kept;
  }
}

export class SwarmPolicy implements Policy {
  readonly name = 'swarm';
  private configuration: SwarmConfiguration | undefined;
  private schedule = -1;

  /** The configuration of the schedule being run (undefined before its first decision). */
  get current(): SwarmConfiguration | undefined {
    return this.configuration;
  }

  resetEpisode(): void {
    this.configuration = undefined;
  }

  decide(ctx: DecideContext): Fault | null {
    if (this.configuration === undefined || ctx.schedule !== this.schedule) {
      this.configuration = drawConfiguration(ctx.space, ctx.rng);
      this.schedule = ctx.schedule;
    }
    const kept = this.configuration;
    const kinds = enactableKinds(ctx.space).filter((k) => kept.has(k));
    const i = ctx.rng.int(kinds.length + 1);
    if (i === kinds.length) return null;
    const f = kinds[i];
    return { f, value: ctx.rng.pick(kept.get(f) ?? ctx.space.valuesOf(f)) };
  }

  learn(): void {
    // Swarm testing does not learn.
  }

  save(): readonly PolicyValue[] {
    return [];
  }

  load(): void {
    // Nothing to load.
  }
}
