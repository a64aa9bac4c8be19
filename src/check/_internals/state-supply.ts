import type { Model } from '../model.js';
import { OK, FAILED, type PartitionData } from './partition.js';
import type { StateTable } from './state-table.js';
import { intArrays } from './int-arrays.js';

const NONE = -1;

/**
 * Which states can still come back, for models that say which single state an op needs and which
 * states an op can enter (`Model.onlyStateFor`, `Model.statesEntered`): per state, the required
 * ops not yet linearized that need it, and the ops not yet linearized (info ops included) that can
 * enter it. A state the model is not in, needed by some op left, that no op left can enter, is
 * dead: the configuration cannot be completed. With every written value unique, this is what
 * orders a read between the write of its value and the next write.
 *
 * A configuration becomes dead only when its last step leaves a state or takes the last op that
 * can enter one, so `take` checks just those.
 */
export class StateSupply {
  /** State id the required op in a slot needs, or NONE. */
  private readonly need: Int32Array;
  /** State id the op in a slot, required or not, needs to take effect at all, or NONE. */
  private readonly want: Int32Array;
  /** States each op can enter: ids `entered[enteredStart[slot] .. enteredStart[slot + 1])`. */
  private readonly enteredStart: Int32Array;
  private readonly entered: Int32Array;
  private readonly needLeft: Int32Array;
  private readonly wantLeft: Int32Array;
  private readonly enterersLeft: Int32Array;
  private readonly taken: Int32Array;
  private readonly completePos: Int32Array;

  /** The state found dead by the last `take` that returned false. */
  deadState = NONE;

  private constructor(
    partition: PartitionData,
    need: Int32Array,
    want: Int32Array,
    enteredStart: Int32Array,
    entered: Int32Array,
    stateCount: number,
  ) {
    this.need = need;
    this.want = want;
    this.enteredStart = enteredStart;
    this.entered = entered;
    this.completePos = partition.completePos;
    [this.taken, this.needLeft, this.wantLeft, this.enterersLeft] = intArrays([
      partition.size,
      stateCount,
      stateCount,
      stateCount,
    ]);
    for (let slot = 0; slot < partition.size; slot++) {
      if (need[slot] !== NONE) this.needLeft[need[slot]]++;
      if (want[slot] !== NONE) this.wantLeft[want[slot]]++;
      for (let e = enteredStart[slot]; e < enteredStart[slot + 1]; e++) this.enterersLeft[entered[e]]++;
    }
  }

  /** The supply of a partition, or undefined when the model does not say what ops need and enter. */
  static of<S, I, O>(
    partition: PartitionData<I, O>,
    model: Model<S, I, O>,
    states: StateTable<S>,
  ): StateSupply | undefined {
    if (model.onlyStateFor === undefined || model.statesEntered === undefined) return undefined;
    const n = partition.size;
    const [need, want, enteredStart] = intArrays([n, n, n + 1]);
    need.fill(NONE);
    want.fill(NONE);
    const entered: number[] = [];
    let stateCount = 0;
    for (let slot = 0; slot < n; slot++) {
      enteredStart[slot] = entered.length;
      const status = partition.status[slot];
      if (status === FAILED) continue;
      const input = partition.inputs[slot];
      const wanted = model.onlyStateFor(input, status === OK ? partition.outputs[slot] : undefined);
      if (wanted !== undefined) {
        want[slot] = states.id(wanted);
        if (status === OK) need[slot] = want[slot];
        stateCount = Math.max(stateCount, want[slot] + 1);
      }
      for (const state of model.statesEntered(input)) {
        const id = states.id(state);
        entered.push(id);
        stateCount = Math.max(stateCount, id + 1);
      }
    }
    enteredStart[n] = entered.length;
    return new StateSupply(partition, need, want, enteredStart, Int32Array.from(entered), stateCount);
  }

  /**
   * Takes the op in `slot` out of those left as the model moves from state `from` to `to`. False,
   * with nothing changed and `deadState` set, when that leaves a needed state dead.
   */
  take(slot: number, from: number, to: number): boolean {
    const entered = this.entered;
    const start = this.enteredStart[slot];
    const end = this.enteredStart[slot + 1];
    this.apply(slot, -1);
    let dead = NONE;
    if (from !== to && this.isDead(from)) dead = from;
    for (let e = start; e < end && dead === NONE; e++) {
      if (entered[e] !== to && this.isDead(entered[e])) dead = entered[e];
    }
    if (dead !== NONE) {
      this.deadState = dead;
      this.apply(slot, 1);
      return false;
    }
    this.taken[slot] = 1;
    return true;
  }

  /** Takes the op out of those left even though that leaves a state dead. */
  force(slot: number): void {
    this.taken[slot] = 1;
    this.apply(slot, -1);
  }

  /** Puts back the op `take` or `force` took. */
  restore(slot: number): void {
    this.taken[slot] = 0;
    this.apply(slot, 1);
  }

  /** The one state the required op in `slot` can take effect in (its id), or -1. */
  needOf(slot: number): number {
    return this.need[slot];
  }

  /** Whether the op in `slot` can take effect in any state (it needs none in particular). */
  isFree(slot: number): boolean {
    return this.want[slot] === NONE;
  }

  /** Whether no op left, required or not, needs `state` in particular. */
  isJunk(state: number): boolean {
    return state >= this.wantLeft.length || this.wantLeft[state] === 0;
  }

  /** The required op left, other than `except`, that needs `state` and completes first, or NONE. */
  firstNeeding(state: number, except: number): number {
    let first = NONE;
    for (let slot = 0; slot < this.need.length; slot++) {
      if (this.need[slot] !== state || this.taken[slot] === 1 || slot === except) continue;
      if (first === NONE || this.completePos[slot] < this.completePos[first]) first = slot;
    }
    return first;
  }

  private isDead(state: number): boolean {
    return state < this.needLeft.length && this.needLeft[state] > 0 && this.enterersLeft[state] === 0;
  }

  /** Counts the op out of (`delta` -1) or back into (+1) those left. */
  private apply(slot: number, delta: number): void {
    if (this.need[slot] !== NONE) this.needLeft[this.need[slot]] += delta;
    if (this.want[slot] !== NONE) this.wantLeft[this.want[slot]] += delta;
    for (let e = this.enteredStart[slot]; e < this.enteredStart[slot + 1]; e++) {
      this.enterersLeft[this.entered[e]] += delta;
    }
  }
}
