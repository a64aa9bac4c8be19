import { intArrays } from './int-arrays.js';
import { IntVec } from './int-vec.js';

export const PENDING = 0;
export const OK = 1;
export const INFO = 2;
export const FAILED = 3;

export type PartitionKey = string | number | bigint;

/** Ops a partition has room for at first, unless told how many to expect. */
const DEFAULT_CAPACITY = 16;

/** What the search needs of a partition: plain arrays, so it can be sent to a worker thread. */
export interface PartitionData<I = unknown, O = unknown> {
  readonly size: number;
  readonly inputs: readonly I[];
  readonly outputs: readonly (O | undefined)[];
  readonly status: Int32Array;
  readonly invokePos: Int32Array;
  readonly completePos: Int32Array;
  readonly events: Int32Array;
}

/**
 * The ops of one partition as they arrive, by slot (invoke order). `events` lists call
 * (`slot * 2`) and return (`slot * 2 + 1`) entries in history order.
 */
export class Partition<I = unknown, O = unknown> {
  readonly inputs: I[] = [];
  readonly outputs: (O | undefined)[] = [];
  readonly status: IntVec;
  readonly invokePos: IntVec;
  readonly completePos: IntVec;
  readonly events: IntVec;

  /** `capacity`: the ops it has room for before its vectors grow. */
  constructor(
    readonly key: PartitionKey | undefined,
    capacity = DEFAULT_CAPACITY,
  ) {
    const [status, invokePos, completePos, events] = intArrays([capacity, capacity, capacity, 2 * capacity]);
    this.status = new IntVec(status);
    this.invokePos = new IntVec(invokePos);
    this.completePos = new IntVec(completePos);
    this.events = new IntVec(events);
  }

  get size(): number {
    return this.inputs.length;
  }

  invoke(input: I, position: number): number {
    const slot = this.inputs.length;
    this.inputs.push(input);
    this.outputs.push(undefined);
    this.status.push(PENDING);
    this.invokePos.push(position);
    this.completePos.push(-1);
    this.events.push(slot * 2);
    return slot;
  }

  complete(
    slot: number,
    status: typeof OK | typeof INFO | typeof FAILED,
    output: O | undefined,
    position: number,
  ): void {
    this.status.set(slot, status);
    this.outputs[slot] = output;
    this.completePos.set(slot, position);
    if (status === OK) this.events.push(slot * 2 + 1);
  }

  /** Where the op of this slot shows best in the history: its `ok` completion, else its invoke. */
  representativePos(slot: number): number {
    return this.status.get(slot) === OK ? this.completePos.get(slot) : this.invokePos.get(slot);
  }

  /** The search's view; `copy` gives arrays of their own (to send to a worker), else views. */
  data(copy: boolean): PartitionData<I, O> {
    const trim = (vec: IntVec): Int32Array =>
      copy ? vec.data.slice(0, vec.length) : vec.data.subarray(0, vec.length);
    return {
      size: this.size,
      inputs: this.inputs,
      outputs: this.outputs,
      status: trim(this.status),
      invokePos: trim(this.invokePos),
      completePos: trim(this.completePos),
      events: trim(this.events),
    };
  }
}
