import type { Model } from '../model.js';
import { MemoryLimitReached } from '../../core/memory-limit.js';

/**
 * The most states a table holds: a JavaScript `Map` holds at most 2^24 entries and throws a
 * `RangeError` past that. A search that needs more ends as one past its memory limit (verdict
 * unknown), not with a crash.
 */
export const MAX_STATES = 2 ** 24 - 1;

/**
 * Gives each distinct model state a small int id, so the memo cache keys on ints. Primitive states
 * are keyed directly; others through the model's hash and equal.
 */
export class StateTable<S> {
  private readonly primitive = new Map<unknown, number>();
  private readonly byHash = new Map<number, number[]>();
  private readonly states: S[] = [];

  constructor(
    private readonly model: Model<S>,
    private readonly maxStates = MAX_STATES,
  ) {}

  id(state: S): number {
    if (state === null || (typeof state !== 'object' && typeof state !== 'function')) {
      let id = this.primitive.get(state);
      if (id === undefined) {
        id = this.added();
        this.states.push(state);
        this.primitive.set(state, id);
      }
      return id;
    }
    const hash = this.model.hash(state);
    let bucket = this.byHash.get(hash);
    if (bucket === undefined) {
      bucket = [];
      this.byHash.set(hash, bucket);
    }
    for (const id of bucket) if (this.model.equal(this.states[id], state)) return id;
    const id = this.added();
    this.states.push(state);
    bucket.push(id);
    return id;
  }

  /** The id of a state about to be added; throws `MemoryLimitReached` when the table is full. */
  private added(): number {
    if (this.states.length >= this.maxStates)
      throw new MemoryLimitReached(
        `the search reached ${this.maxStates} distinct model states, the most it can hold`,
      );
    return this.states.length;
  }
}
