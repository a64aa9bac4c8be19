import type { Model } from '../model.js';
import { FAILED, OK, PENDING, type PartitionData } from './partition.js';
import { StateTable } from './state-table.js';
import { ValueIds } from './value-ids.js';

/** Beyond these the closure is not worth computing: a one-step bound stands in for it. */
export interface ImpossibleOpLimits {
  readonly maxDistinctOps: number;
  readonly maxStates: number;
}

const LIMITS: ImpossibleOpLimits = { maxDistinctOps: 2000, maxStates: 1000 };

interface Kind<I, O> {
  readonly input: I;
  readonly output: O | undefined;
}

/**
 * A completed op that cannot take effect in any state the model can reach at all (by applying
 * any of the partition's ops in any order), e.g. a read of a value nobody wrote: then no
 * linearization exists, however many `info` ops make the search itself explode. Returns the
 * slot of the first such op by completion, or -1 (also when the state space is too large and the
 * model does not say which state an op needs).
 *
 * The reachable states are the closure of the initial state under the ops, while there are few
 * ops and states; beyond `limits`, with a model that says which state an op needs, a superset of
 * them that one pass gives (see `oneStep`): an op that needs none of those states is still
 * impossible, as a read of a value whose only write failed (a history of 5,000 ops with unique
 * values, where this took a search of 18 minutes and 9 GB, is decided at once).
 */
export function findImpossibleOp<S, I, O>(
  partition: PartitionData<I, O>,
  model: Model<S, I, O>,
  limits: ImpossibleOpLimits = LIMITS,
): number {
  const { size, status, inputs, outputs } = partition;
  const kinds: Kind<I, O>[] = [];
  const kindOf = new Int32Array(size).fill(-1);
  const ids = new ValueIds();
  const byId: number[] = [];
  for (let slot = 0; slot < size; slot++) {
    if (status[slot] === FAILED) continue;
    const output = status[slot] === OK ? outputs[slot] : undefined;
    const id = ids.pairId(inputs[slot], output);
    let kind = id < 0 ? undefined : byId[id];
    if (kind === undefined) {
      kind = kinds.length;
      kinds.push({ input: inputs[slot], output });
      if (id >= 0) byId[id] = kind;
    }
    kindOf[slot] = kind;
  }

  const closure =
    kinds.length <= limits.maxDistinctOps ? reachability(model, kinds, limits.maxStates) : undefined;
  const canTakeEffect = closure ?? oneStep(model, kinds);
  if (canTakeEffect === undefined) return -1;

  const possible = new Int8Array(kinds.length);
  let first = -1;
  for (let slot = 0; slot < size; slot++) {
    if (status[slot] !== OK) continue;
    const kind = kindOf[slot];
    if (possible[kind] === 0) {
      possible[kind] = canTakeEffect(kinds[kind]) ? 1 : -1;
    }
    if (possible[kind] === -1 && (first < 0 || partition.completePos[slot] < partition.completePos[first])) {
      first = slot;
    }
  }
  return first;
}

/**
 * Whether an op can take effect in some state the model can reach by applying the ops in any
 * order; undefined when there are more than `maxStates` such states, or, where the model does not
 * say which state an op needs (so every op is tried in every state), more states than one per
 * distinct op and the initial one: then the ops' effects compose (appends to a string give a state
 * per order of them), the closure would be given up only at `maxStates` after `maxStates` times the
 * distinct ops of steps, far more than a search of a small history takes. When the model says which
 * state an op needs (`Model.onlyStateFor`), only the ops that can take effect in a state are
 * applied to it, and those that need none (whose state after does not depend on the state
 * before) once.
 */
function reachability<S, I, O>(
  model: Model<S, I, O>,
  kinds: readonly Kind<I, O>[],
  maxStates: number,
): ((kind: Kind<I, O>) => boolean) | undefined {
  const table = new StateTable(model);
  const states: S[] = [];
  const reached = new Set<number>();
  const reach = (state: S): boolean => {
    const id = table.id(state);
    if (!reached.has(id)) {
      reached.add(id);
      states.push(state);
    }
    return states.length <= maxStates;
  };
  if (!reach(model.init())) return undefined;
  const onlyStateFor = model.onlyStateFor?.bind(model);
  if (onlyStateFor === undefined) {
    const maxBlindStates = Math.min(maxStates, kinds.length + 1);
    for (let i = 0; i < states.length; i++) {
      for (const kind of kinds) {
        const next = model.step(states[i], kind.input, kind.output);
        if (next !== undefined && (!reach(next) || states.length > maxBlindStates)) return undefined;
      }
    }
    return ({ input, output }) => states.some((state) => model.step(state, input, output) !== undefined);
  }
  const byNeed = new Map<number, Kind<I, O>[]>();
  for (const kind of kinds) {
    const needed = onlyStateFor(kind.input, kind.output);
    if (needed === undefined) {
      const next = model.step(states[0], kind.input, kind.output);
      if (next !== undefined && !reach(next)) return undefined;
      continue;
    }
    const id = table.id(needed);
    const list = byNeed.get(id);
    if (list === undefined) byNeed.set(id, [kind]);
    else list.push(kind);
  }
  for (let i = 0; i < states.length; i++) {
    for (const kind of byNeed.get(table.id(states[i])) ?? []) {
      const next = model.step(states[i], kind.input, kind.output);
      if (next !== undefined && !reach(next)) return undefined;
    }
  }
  return ({ input, output }) => {
    const needed = onlyStateFor(input, output);
    const from = needed === undefined ? states[0] : needed;
    return reached.has(table.id(from)) && model.step(from, input, output) !== undefined;
  };
}

/**
 * With a model that says which state an op needs: whether an op can take effect in one of the
 * states that some op can move the model into, which hold every reachable state. A reachable state
 * other than the initial one is one that some op moved the model into from another state: an op
 * that needs a state moves it where it does from that state (a read, which keeps it, moves it
 * nowhere); one that needs none keeps the state or leaves one that does not depend on it, the same
 * as from the initial state. Undefined for other models.
 */
function oneStep<S, I, O>(
  model: Model<S, I, O>,
  kinds: readonly Kind<I, O>[],
): ((kind: Kind<I, O>) => boolean) | undefined {
  const onlyStateFor = model.onlyStateFor?.bind(model);
  if (onlyStateFor === undefined) return undefined;
  const table = new StateTable(model);
  const left = new Set<number>();
  const init = model.init();
  left.add(table.id(init));
  for (const kind of kinds) {
    const needed = onlyStateFor(kind.input, kind.output);
    const next = model.step(needed ?? init, kind.input, kind.output);
    // An op that keeps the state it needs (a read) leaves no state it did not find.
    if (next !== undefined && (needed === undefined || !model.equal(next, needed))) left.add(table.id(next));
  }
  return ({ input, output }) => {
    const needed = onlyStateFor(input, output);
    const from = needed === undefined ? init : needed;
    return left.has(table.id(from)) && model.step(from, input, output) !== undefined;
  };
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
