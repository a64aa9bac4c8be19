import { describeFault, type Fault, type FaultKind } from '../../core/fault.js';
import type { Rng } from '../../core/random.js';
import type { ActionSpace } from '../policy.js';

/** The key of the no-op action in saved policy values. */
export const NOOP = 'noop';

/** How an action is keyed in a Q-table and in saved `PolicyValue` rows. */
export function actionKey(fault: Fault | null): string {
  return describeFault(fault);
}

/** Every (kind, value) pair of the space, then the no-op (`null`). */
export function concreteActions(space: ActionSpace): (Fault | null)[] {
  const out: (Fault | null)[] = [];
  for (const f of space.kinds) for (const value of space.valuesOf(f)) out.push({ f, value });
  out.push(null);
  return out;
}

/** A kind with a value drawn at random from the space (as Jepsen's generators pick targets). */
export function withRandomValue(kind: FaultKind, space: ActionSpace, rng: Rng): Fault {
  const values = space.valuesOf(kind);
  return { f: kind, value: values.length > 0 ? rng.pick(values) : null };
}

/** Samples an index from softmax(values / temperature) by inversion, as the artifact does. */
export function softmaxSample(values: readonly number[], temperature: number, u: number): number {
  const max = Math.max(...values);
  const weights = values.map((v) => Math.exp((v - max) / temperature));
  let total = 0;
  for (const w of weights) total += w;
  let cdf = 0;
  for (let i = 0; i < weights.length; i++) {
    cdf += weights[i] / total;
    if (u < cdf) return i;
  }
  return weights.length - 1;
}
