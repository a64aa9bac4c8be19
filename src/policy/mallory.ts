import type { Fault } from '../core/fault.js';
import { NOOP, softmaxSample, withRandomValue } from './_internals/actions.js';
import type { DecideContext, Policy, PolicyValue, Transition } from './policy.js';
import { mergeEntry, type PutEntry, setEntry } from './_internals/put-entry.js';

/**
 * The Mallory artifact's Q-learning, as it is (mediator `QLearningScheduler` + `SoftmaxPolicy` +
 * the `EventHistory` reward):
 * - actions: the enabled fault kinds plus the no-op; the value (target, shape) is drawn at random;
 * - reward: −1 if the window's state was seen before, 0 if it is new;
 * - update: Q(s, a) ← 0.9·Q(s, a) + 0.1·(r + 0.6·max_a′ Q(s′, a′)), unknown entries 0;
 * - choice: softmax with temperature 100 (≈ uniform, as Q ∈ [−1, 0]);
 * - when the previous window's state has not arrived (`ctx.state` undefined), the no-op, and
 *   nothing is learned for that step (`transition.state` undefined).
 *
 * Campaign wiring, per step: `fault = policy.decide({state: prevStateId, …})`; enact; close the
 * window; `policy.learn({state: prevStateId, action: fault, next: stateId, seenBefore})`.
 */
export interface MalloryOptions {
  readonly temperature?: number;
  readonly alpha?: number;
  readonly gamma?: number;
}

export const MALLORY_TEMPERATURE = 100;
export const MALLORY_ALPHA = 0.1;
export const MALLORY_GAMMA = 0.6;

interface Entry {
  value: number;
  visits: number;
}

export class MalloryPolicy implements Policy {
  readonly name = 'mallory';
  private readonly temperature: number;
  private readonly alpha: number;
  private readonly gamma: number;
  private readonly q = new Map<string, Map<string, Entry>>();
  private actions: readonly string[] = [NOOP];

  constructor(options: MalloryOptions = {}) {
    this.temperature = options.temperature ?? MALLORY_TEMPERATURE;
    this.alpha = options.alpha ?? MALLORY_ALPHA;
    this.gamma = options.gamma ?? MALLORY_GAMMA;
    if (!(this.temperature > 0))
      throw new RangeError(`mallory temperature should be > 0, got ${this.temperature}`);
  }

  decide(ctx: DecideContext): Fault | null {
    this.actions = [...ctx.space.kinds, NOOP];
    if (ctx.state === undefined) return null;
    const row = this.q.get(ctx.state);
    const values = this.actions.map((a) => row?.get(a)?.value ?? 0);
    const i = softmaxSample(values, this.temperature, ctx.rng.next());
    const kind = ctx.space.kinds[i] as (typeof ctx.space.kinds)[number] | undefined;
    return kind === undefined ? null : withRandomValue(kind, ctx.space, ctx.rng);
  }

  learn(t: Transition): void {
    if (t.state === undefined) return;
    const reward = t.seenBefore > 0 ? -1 : 0;
    const next = this.q.get(t.next);
    let nextMax = -Infinity;
    for (const a of this.actions) nextMax = Math.max(nextMax, next?.get(a)?.value ?? 0);
    if (next) for (const e of next.values()) nextMax = Math.max(nextMax, e.value);
    let row = this.q.get(t.state);
    if (!row) this.q.set(t.state, (row = new Map<string, Entry>()));
    const key = t.action === null ? NOOP : t.action.f;
    const entry = row.get(key) ?? { value: 0, visits: 0 };
    entry.value = (1 - this.alpha) * entry.value + this.alpha * (reward + this.gamma * nextMax);
    entry.visits++;
    row.set(key, entry);
  }

  /** The Q-value of (state, kind or `noop`); 0 when unknown. */
  value(state: string, action: string): number {
    return this.q.get(state)?.get(action)?.value ?? 0;
  }

  save(): readonly PolicyValue[] {
    const out: PolicyValue[] = [];
    for (const [state, row] of this.q) {
      for (const [action, e] of row) out.push({ state, action, value: e.value, visits: e.visits });
    }
    return out;
  }

  load(values: readonly PolicyValue[]): void {
    this.put(values, setEntry);
  }

  merge(values: readonly PolicyValue[]): void {
    this.put(values, mergeEntry);
  }

  private put(values: readonly PolicyValue[], put: PutEntry): void {
    for (const v of values) {
      let row = this.q.get(v.state);
      if (!row) this.q.set(v.state, (row = new Map<string, Entry>()));
      put(row, v.action, v.value, v.visits);
    }
  }
}
