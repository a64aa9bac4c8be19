import type { Model } from '../model.js';
import { inputKey } from './input-key.js';
import { FAILED, OK, PENDING, type PartitionData } from './partition.js';
import { StateTable } from './state-table.js';

/** Beyond these the closure is not worth computing: the search alone decides. */
const MAX_DISTINCT_OPS = 2000;
const MAX_STATES = 1000;

interface Kind<I, O> {
  readonly input: I;
  readonly output: O | undefined;
}

/**
 * A completed op that cannot take effect in any state the model can reach at all (by applying
 * any of the partition's ops in any order), e.g. a read of a value nobody wrote: then no
 * linearization exists, however many `info` ops make the search itself explode. Returns the
 * slot of the first such op by completion, or -1 (also when the state space is too large).
 */
export function findImpossibleOp<S, I, O>(partition: PartitionData<I, O>, model: Model<S, I, O>): number {
  const { size, status, inputs, outputs } = partition;
  const kinds: Kind<I, O>[] = [];
  const kindOf = new Int32Array(size).fill(-1);
  const byKey = new Map<string, number>();
  for (let slot = 0; slot < size; slot++) {
    if (status[slot] === FAILED) continue;
    const output = status[slot] === OK ? outputs[slot] : undefined;
    const inKey = inputKey(inputs[slot]);
    const outKey = output === undefined ? '' : inputKey(output);
    const key = inKey === undefined || outKey === undefined ? undefined : `${inKey}\u0000${outKey}`;
    let kind = key === undefined ? undefined : byKey.get(key);
    if (kind === undefined) {
      kind = kinds.length;
      kinds.push({ input: inputs[slot], output });
      if (kinds.length > MAX_DISTINCT_OPS) return -1;
      if (key !== undefined) byKey.set(key, kind);
    }
    kindOf[slot] = kind;
  }

  const table = new StateTable(model);
  const states: S[] = [model.init()];
  table.id(states[0]);
  for (let i = 0; i < states.length; i++) {
    for (const kind of kinds) {
      const next = model.step(states[i], kind.input, kind.output);
      if (next === undefined) continue;
      const before = states.length;
      if (table.id(next) === before) {
        states.push(next);
        if (states.length > MAX_STATES) return -1;
      }
    }
  }

  const possible = new Int8Array(kinds.length);
  let first = -1;
  for (let slot = 0; slot < size; slot++) {
    if (status[slot] !== OK) continue;
    const kind = kindOf[slot];
    if (possible[kind] === 0) {
      const { input, output } = kinds[kind];
      possible[kind] = states.some((state) => model.step(state, input, output) !== undefined) ? 1 : -1;
    }
    if (possible[kind] === -1 && (first < 0 || partition.completePos[slot] < partition.completePos[first])) {
      first = slot;
    }
  }
  return first;
}

/**
 * The partition as it stood when `slot` completed, without it: ops invoked later are left out, and
 * ops still running then become pending (they may or may not have taken effect by then).
 */
export function historyBefore<I, O>(partition: PartitionData<I, O>, slot: number): PartitionData<I, O> {
  const cut = partition.completePos[slot];
  const status = partition.status.slice();
  const outputs = partition.outputs.slice();
  for (let s = 0; s < partition.size; s++) {
    if (s === slot || partition.invokePos[s] > cut) {
      status[s] = FAILED;
    } else if (status[s] === OK && partition.completePos[s] > cut) {
      status[s] = PENDING;
      outputs[s] = undefined;
    }
  }
  return { ...partition, status, outputs };
}
