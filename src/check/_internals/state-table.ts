import type { Model } from '../model.js';

/**
 * Gives each distinct model state a small int id, so the memo cache keys on ints. Primitive states
 * are keyed directly; others through the model's hash and equal.
 */
export class StateTable<S> {
  private readonly primitive = new Map<unknown, number>();
  private readonly byHash = new Map<number, number[]>();
  private readonly states: S[] = [];

  constructor(private readonly model: Model<S>) {}

  id(state: S): number {
    if (state === null || (typeof state !== 'object' && typeof state !== 'function')) {
      let id = this.primitive.get(state);
      if (id === undefined) {
        id = this.states.length;
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
    const id = this.states.length;
    this.states.push(state);
    bucket.push(id);
    return id;
  }
}
