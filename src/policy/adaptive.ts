import type { Fault, FaultKind } from '../core/fault.js';
import { actionKey, concreteActions } from './_internals/actions.js';
import type { DecideContext, Policy, PolicyValue, Transition } from './policy.js';
import { mergeEntry, type PutEntry, setEntry } from './_internals/put-entry.js';

/**
 * Our policy (`adaptive`, the default). Differences from the artifact's:
 * - actions are concrete (kind, value) pairs — target and shape are learned, not drawn;
 * - reward: count-based novelty, 1/√(n + 1) for a state seen n times before (1 when new);
 * - values: Q(s, a) with a shrinkage prior towards the action's global value G(a), so what pays
 *   off in one state is tried first in the many states seen for the first time; an action never
 *   tried starts from its kind's value K(kind) (what `kill` earned tells about `kill:leader`);
 *   G and K are learned even when the window's state was late;
 * - exploration: UCB1 on those values (untried actions first, then what paid off), plus a small ε;
 * - sequences: an undo (stop-partition, start, resume, stop-packet, member-add, reset-clock) is only offered
 *   while its fault is active in this schedule, and after `stagnationSteps` windows with nothing
 *   new, an undo is preferred with probability `undoBias`, rising by 0.25 per further such window
 *   (heal a dead cluster, then fault again elsewhere).
 *
 * Campaign wiring, per step: `fault = policy.decide(ctx)` (the policy assumes the fault is enacted);
 * close the window; `policy.learn({state, action: fault, next, seenBefore})`; `resetEpisode()` at
 * each schedule's start. Saved rows: `(state, action, Q, visits)`, `('*', action, G, visits)` and
 * `('*kind', kind, K, visits)`.
 */
export interface AdaptiveOptions {
  readonly alpha?: number;
  readonly gamma?: number;
  /** UCB exploration weight. */
  readonly exploration?: number;
  /** Weight (in visits) of the global action value in a state's estimate. */
  readonly priorWeight?: number;
  readonly epsilon?: number;
  readonly stagnationSteps?: number;
  readonly undoBias?: number;
  /** Value given to an action never tried anywhere (optimistic: tried early). */
  readonly initialValue?: number;
}

export const GLOBAL_STATE = '*';
export const KIND_STATE = '*kind';
/** Extra undo preference per window of stagnation beyond `stagnationSteps`. */
const UNDO_BIAS_STEP = 0.25;
const DEFAULTS = {
  alpha: 0.3,
  gamma: 0.3,
  exploration: 0.3,
  priorWeight: 2,
  epsilon: 0.05,
  stagnationSteps: 3,
  undoBias: 0.5,
  initialValue: 1,
} as const;
/** Floor of the global value's step size: rewards drift (novelty decays), so recent ones weigh more. */
const MIN_GLOBAL_STEP = 0.1;

const UNDO_OF: Partial<Record<FaultKind, readonly FaultKind[]>> = {
  'stop-partition': ['start-partition'],
  start: ['kill', 'lose-unfsynced', 'torn-write'],
  resume: ['pause'],
  'stop-packet': ['start-packet'],
  'member-add': ['member-remove'],
  'reset-clock': ['bump-clock', 'drift-clock', 'strobe-clock'],
  'heal-disk': ['lose-unfsynced', 'torn-write', 'fsync-error', 'slow-disk', 'disk-full'],
};

/** The kind part of an action key (`kill:leader` → `kill`, `noop` → `noop`). */
function kindOf(key: string): string {
  const i = key.indexOf(':');
  return i < 0 ? key : key.slice(0, i);
}

/** Novelty reward for a state seen `seenBefore` times before this window. */
export function noveltyReward(seenBefore: number): number {
  return 1 / Math.sqrt(seenBefore + 1);
}

interface Entry {
  value: number;
  visits: number;
}

export class AdaptivePolicy implements Policy {
  readonly name = 'adaptive';
  private readonly o: Required<AdaptiveOptions>;
  private readonly q = new Map<string, Map<string, Entry>>();
  private readonly global = new Map<string, Entry>();
  private readonly kinds = new Map<string, Entry>();
  private decisions = 0;
  private stagnant = 0;
  private readonly active = new Map<FaultKind, number>();

  constructor(options: AdaptiveOptions = {}) {
    this.o = { ...DEFAULTS, ...options };
    for (const k of ['alpha', 'gamma', 'epsilon', 'undoBias'] as const) {
      const v = this.o[k];
      if (!(v >= 0 && v <= 1)) throw new RangeError(`adaptive ${k} should be in [0, 1], got ${v}`);
    }
  }

  resetEpisode(): void {
    this.active.clear();
    this.stagnant = 0;
  }

  decide(ctx: DecideContext): Fault | null {
    this.decisions++;
    const candidates = concreteActions(ctx.space).filter((a) => this.valid(a));
    let pool = candidates;
    const undoChance = this.o.undoBias + UNDO_BIAS_STEP * (this.stagnant - this.o.stagnationSteps);
    if (this.stagnant >= this.o.stagnationSteps && ctx.rng.chance(Math.min(1, undoChance))) {
      const undos = candidates.filter((a) => a !== null && UNDO_OF[a.f] !== undefined);
      if (undos.length > 0) pool = undos;
    }
    const choice = ctx.rng.chance(this.o.epsilon) ? ctx.rng.pick(pool) : this.best(pool, ctx);
    this.track(choice);
    return choice;
  }

  /**
   * A decision taken for the policy (a replayed sequence): counted and tracked as its own, so its
   * undo is offered after it.
   */
  follow(fault: Fault | null): void {
    this.decisions++;
    this.track(fault);
  }

  learn(t: Transition): void {
    const reward = noveltyReward(t.seenBefore);
    this.stagnant = t.seenBefore > 0 ? this.stagnant + 1 : 0;
    const key = actionKey(t.action);
    this.average(this.global, key, reward);
    this.average(this.kinds, kindOf(key), reward);
    if (t.state === undefined) return;
    let nextMax = 0;
    const next = this.q.get(t.next);
    if (next) for (const [a, e] of next) nextMax = Math.max(nextMax, this.estimate(e, a));
    let row = this.q.get(t.state);
    if (!row) this.q.set(t.state, (row = new Map<string, Entry>()));
    const e = row.get(key) ?? { value: this.globalValue(key), visits: 0 };
    e.value = (1 - this.o.alpha) * e.value + this.o.alpha * (reward + this.o.gamma * nextMax);
    e.visits++;
    row.set(key, e);
  }

  save(): readonly PolicyValue[] {
    const out: PolicyValue[] = [];
    for (const [action, e] of this.global)
      out.push({ state: GLOBAL_STATE, action, value: e.value, visits: e.visits });
    for (const [action, e] of this.kinds)
      out.push({ state: KIND_STATE, action, value: e.value, visits: e.visits });
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
      if (v.state === KIND_STATE) {
        put(this.kinds, v.action, v.value, v.visits);
        continue;
      }
      if (v.state === GLOBAL_STATE) {
        put(this.global, v.action, v.value, v.visits);
        this.decisions += v.visits;
        continue;
      }
      let row = this.q.get(v.state);
      if (!row) this.q.set(v.state, (row = new Map<string, Entry>()));
      put(row, v.action, v.value, v.visits);
    }
  }

  /** The current estimate of an action in a state (for reports and tests). */
  value(state: string | undefined, fault: Fault | null): number {
    const key = actionKey(fault);
    const e = state === undefined ? undefined : this.q.get(state)?.get(key);
    return e ? this.estimate(e, key) : this.globalValue(key);
  }

  private best(pool: readonly (Fault | null)[], ctx: DecideContext): Fault | null {
    const row = ctx.state === undefined ? undefined : this.q.get(ctx.state);
    const logN = Math.log(this.decisions + 1);
    let best: (Fault | null)[] = [];
    let bestScore = -Infinity;
    for (const a of pool) {
      const key = actionKey(a);
      const e = row?.get(key);
      const tried = (this.global.get(key)?.visits ?? 0) + (e?.visits ?? 0);
      const score =
        (e ? this.estimate(e, key) : this.globalValue(key)) +
        this.o.exploration * Math.sqrt(logN / (tried + 1));
      if (score > bestScore + 1e-12) {
        best = [a];
        bestScore = score;
      } else if (Math.abs(score - bestScore) <= 1e-12) best.push(a);
    }
    return ctx.rng.pick(best);
  }

  private estimate(e: Entry, key: string): number {
    const k = this.o.priorWeight;
    return (e.visits * e.value + k * this.globalValue(key)) / (e.visits + k);
  }

  private globalValue(key: string): number {
    return this.global.get(key)?.value ?? this.kinds.get(kindOf(key))?.value ?? this.o.initialValue;
  }

  /** A running mean whose step never falls below `MIN_GLOBAL_STEP` (rewards drift). */
  private average(table: Map<string, Entry>, key: string, reward: number): void {
    const e = table.get(key) ?? { value: 0, visits: 0 };
    e.visits++;
    e.value += Math.max(1 / e.visits, MIN_GLOBAL_STEP) * (reward - e.value);
    table.set(key, e);
  }

  private valid(a: Fault | null): boolean {
    if (a === null) return true;
    const undoes = UNDO_OF[a.f];
    return undoes === undefined || undoes.some((f) => (this.active.get(f) ?? 0) > 0);
  }

  private track(a: Fault | null): void {
    if (a === null) return;
    const undoes = UNDO_OF[a.f];
    if (undoes === undefined) this.active.set(a.f, (this.active.get(a.f) ?? 0) + 1);
    else if (a.value === 'one') {
      const f = undoes.find((k) => (this.active.get(k) ?? 0) > 0);
      if (f !== undefined) this.active.set(f, (this.active.get(f) ?? 0) - 1);
    } else for (const f of undoes) this.active.delete(f);
  }
}
