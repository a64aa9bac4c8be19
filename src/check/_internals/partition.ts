import { IntVec } from './int-vec.js';

export const PENDING = 0;
export const OK = 1;
export const INFO = 2;
export const FAILED = 3;

export type PartitionKey = string | number;

/**
 * The ops of one partition as they arrive, by slot (invoke order). `events` lists call
 * (`slot * 2`) and return (`slot * 2 + 1`) entries in history order.
 */
export class Partition<I = unknown, O = unknown> {
  readonly inputs: I[] = [];
  readonly outputs: (O | undefined)[] = [];
  readonly status = new IntVec();
  readonly invokePos = new IntVec();
  readonly completePos = new IntVec();
  readonly events = new IntVec();

  constructor(readonly key: PartitionKey | undefined) {}

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
}
