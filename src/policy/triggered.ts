import type { Fault } from '../core/fault.js';
import { describeTrigger, type TriggeredAction } from '../core/trigger.js';
import { AdaptivePolicy, noveltyReward, type AdaptiveOptions } from './adaptive.js';
import { triggerActions } from './_internals/trigger-actions.js';
import type { ArmContext, DecideContext, Policy, PolicyValue, Transition } from './policy.js';
import { mergeEntry, type PutEntry, setEntry } from './_internals/put-entry.js';

/**
 * `triggered`: `adaptive`'s choice of the fault to enact now, plus a second decision per step —
 * which triggered action to arm for the rest of the step ("when an event of type E is observed, do
 * fault F on a target relative to the event, after a delay"), or none. Event types come from what
 * the run observed so far, so the space grows as the system shows more of itself.
 *
 * Triggered actions are valued as `adaptive` values its faults: count-based novelty reward of the
 * window, Q(s, a) shrunk towards the action's global value G(a); an action never tried starts from
 * the mean of its priors — what triggers on its event type earned after the fault the step just
 * enacted, E(enacted, type) (after a leader's kill, `become-leader` is an event that will come; after
 * a follower's pause it may not), else on that type after any fault, E(type); what its fault and
 * target earned when they fired, F(fault:target); and its delay D(d); exploration is UCB1 whose
 * bonus is mostly per factor (how often its event type was armed, its fault and target and its
 * delay fired), so the space is explored mostly as |types| + |faults| + |delays| arms rather than
 * their product — what keeps hundreds of actions affordable — plus a small ε.
 *
 * Saved rows: `adaptive`'s, then `(state, 'on:…', Q, visits)`, `('*on', 'on:…', G, visits)`,
 * `('*on-event', type, E, visits)`, `('*on-after', 'kill:leader>type', E, visits)`,
 * `('*on-fault', 'kill:event', F, visits)` and `('*on-delay', '5', D, visits)`.
 */
export interface TriggeredOptions extends AdaptiveOptions {
  /** How many event types (the most recently observed) triggers are offered on. */
  readonly eventTypes?: number;
}

export const TRIGGER_GLOBAL_STATE = '*on';
export const TRIGGER_EVENT_STATE = '*on-event';
export const TRIGGER_AFTER_STATE = '*on-after';
export const TRIGGER_FAULT_STATE = '*on-fault';
export const TRIGGER_DELAY_STATE = '*on-delay';
export const DEFAULT_TRIGGER_EVENT_TYPES = 24;
interface Settings {
  readonly alpha: number;
  readonly gamma: number;
  readonly exploration: number;
  readonly priorWeight: number;
  readonly epsilon: number;
  readonly initialValue: number;
  readonly eventTypes: number;
}
const DEFAULTS = {
  alpha: 0.3,
  gamma: 0.3,
  exploration: 0.3,
  priorWeight: 2,
  epsilon: 0.05,
  initialValue: 1,
};
/** Floor of a running mean's step size: rewards drift (novelty decays), so recent ones weigh more. */
const MIN_MEAN_STEP = 0.1;
const TIE = 1e-12;
const ROW_SEPARATOR = '|';

interface Entry {
  value: number;
  visits: number;
}

export class TriggeredPolicy implements Policy {
  readonly name = 'triggered';
  private readonly immediate: AdaptivePolicy;
  private readonly o: Settings;
  /** Q(state, enacted, action): per window state, per fault the step enacted, per triggered action. */
  private readonly q = new Map<string, Map<string, Map<string, Entry>>>();
  private readonly global = new Map<string, Entry>();
  private readonly events = new Map<string, Entry>();
  /** E(enacted, type): keyed `enactedKey(fault)>type`. */
  private readonly after = new Map<string, Entry>();
  private readonly faults = new Map<string, Entry>();
  private readonly delays = new Map<string, Entry>();
  private arms = 0;

  constructor(options: TriggeredOptions = {}) {
    this.immediate = new AdaptivePolicy(options);
    const eventTypes = options.eventTypes ?? DEFAULT_TRIGGER_EVENT_TYPES;
    if (!(Number.isInteger(eventTypes) && eventTypes >= 1)) {
      throw new RangeError(`triggered eventTypes should be a positive integer, got ${eventTypes}`);
    }
    const pick = (k: keyof typeof DEFAULTS): number => options[k] ?? DEFAULTS[k];
    this.o = {
      alpha: pick('alpha'),
      gamma: pick('gamma'),
      exploration: pick('exploration'),
      priorWeight: pick('priorWeight'),
      epsilon: pick('epsilon'),
      initialValue: pick('initialValue'),
      eventTypes,
    };
  }

  /** How many event types triggers are offered on. */
  get eventTypeLimit(): number {
    return this.o.eventTypes;
  }

  resetEpisode(): void {
    this.immediate.resetEpisode();
  }

  decide(ctx: DecideContext): Fault | null {
    return this.immediate.decide(ctx);
  }

  /** A fault enacted for the policy (a replayed sequence), tracked as its own. */
  follow(fault: Fault | null): void {
    this.immediate.follow(fault);
  }

  /** A trigger armed for the policy (a replayed sequence), counted as its own arming. */
  followArm(): void {
    this.arms++;
  }

  /**
   * The triggered actions offered now: every one over the `eventTypes` most recently observed
   * types (sorted by name, so a seeded choice among them is stable), then none.
   */
  actions(ctx: ArmContext): (TriggeredAction | null)[] {
    const types = ctx.eventTypes.slice(-this.o.eventTypes).sort();
    return [...triggerActions(types, ctx.space), null];
  }

  arm(ctx: ArmContext): TriggeredAction | null {
    this.arms++;
    const pool = this.actions(ctx);
    if (ctx.rng.chance(this.o.epsilon)) return ctx.rng.pick(pool);
    const enacted = enactedKey(ctx.enacted ?? null);
    const row = ctx.state === undefined ? undefined : this.q.get(ctx.state)?.get(enacted);
    const logN = Math.log(this.arms + 1);
    let best: (TriggeredAction | null)[] = [];
    let bestScore = -Infinity;
    for (const a of pool) {
      const e = row?.get(describeTrigger(a));
      const score =
        (e ? this.estimate(e, a, enacted) : this.prior(a, enacted)) +
        this.o.exploration * this.bonus(a, logN);
      if (score > bestScore + TIE) {
        best = [a];
        bestScore = score;
      } else if (Math.abs(score - bestScore) <= TIE) best.push(a);
    }
    return ctx.rng.pick(best);
  }

  learn(t: Transition): void {
    this.immediate.learn(t);
    if (t.armed === undefined) return;
    const a = t.armed;
    const key = describeTrigger(a);
    const reward = noveltyReward(t.seenBefore);
    mean(this.global, key, reward);
    const enacted = enactedKey(t.action);
    if (a !== null) {
      mean(this.events, a.on, reward);
      mean(this.after, `${enacted}>${a.on}`, reward);
      // What a fault does is only seen when it fired.
      if (t.fired === true) {
        mean(this.faults, faultKey(a), reward);
        mean(this.delays, String(a.delayMs), reward);
      }
    }
    if (t.state === undefined) return;
    // The next decision's row depends on the fault it will follow: take the best of any.
    let nextMax = 0;
    for (const next of this.q.get(t.next)?.values() ?? []) {
      for (const e of next.values()) nextMax = Math.max(nextMax, e.value);
    }
    const row = this.row(t.state, enacted);
    const e = row.get(key) ?? { value: this.prior(a, enacted), visits: 0 };
    e.value = (1 - this.o.alpha) * e.value + this.o.alpha * (reward + this.o.gamma * nextMax);
    e.visits++;
    row.set(key, e);
  }

  /** The current estimate of arming `a` in a state, after `enacted` (for reports and tests). */
  value(state: string | undefined, a: TriggeredAction | null, enacted: Fault | null = null): number {
    const k = enactedKey(enacted);
    const e = state === undefined ? undefined : this.q.get(state)?.get(k)?.get(describeTrigger(a));
    return e ? this.estimate(e, a, k) : this.prior(a, k);
  }

  save(): readonly PolicyValue[] {
    const out: PolicyValue[] = [...this.immediate.save()];
    const table = (state: string, t: Map<string, Entry>): void => {
      for (const [action, e] of t) out.push({ state, action, value: e.value, visits: e.visits });
    };
    table(TRIGGER_GLOBAL_STATE, this.global);
    table(TRIGGER_EVENT_STATE, this.events);
    table(TRIGGER_AFTER_STATE, this.after);
    table(TRIGGER_FAULT_STATE, this.faults);
    table(TRIGGER_DELAY_STATE, this.delays);
    for (const [state, rows] of this.q) {
      for (const [enacted, row] of rows) table(rowKey(state, enacted), row);
    }
    return out;
  }

  load(values: readonly PolicyValue[]): void {
    this.immediate.load(this.put(values, setEntry));
  }

  merge(values: readonly PolicyValue[]): void {
    this.immediate.merge(this.put(values, mergeEntry));
  }

  /** Puts the trigger rows into this policy's tables; returns the rest (the immediate faults'). */
  private put(values: readonly PolicyValue[], put: PutEntry): PolicyValue[] {
    const theirs: PolicyValue[] = [];
    for (const v of values) {
      if (v.state === TRIGGER_GLOBAL_STATE) {
        put(this.global, v.action, v.value, v.visits);
        this.arms += v.visits;
      } else if (v.state === TRIGGER_EVENT_STATE) put(this.events, v.action, v.value, v.visits);
      else if (v.state === TRIGGER_AFTER_STATE) put(this.after, v.action, v.value, v.visits);
      else if (v.state === TRIGGER_FAULT_STATE) put(this.faults, v.action, v.value, v.visits);
      else if (v.state === TRIGGER_DELAY_STATE) put(this.delays, v.action, v.value, v.visits);
      else if (v.action.startsWith('on:')) {
        const { state, enacted } = parseRowKey(v.state);
        put(this.row(state, enacted), v.action, v.value, v.visits);
      } else theirs.push(v);
    }
    return theirs;
  }

  /** The Q row of a state after an enacted fault, made empty if new. */
  private row(state: string, enacted: string): Map<string, Entry> {
    let rows = this.q.get(state);
    if (!rows) this.q.set(state, (rows = new Map<string, Map<string, Entry>>()));
    let row = rows.get(enacted);
    if (!row) rows.set(enacted, (row = new Map<string, Entry>()));
    return row;
  }

  private estimate(e: Entry, a: TriggeredAction | null, enacted: string): number {
    const k = this.o.priorWeight;
    return (e.visits * e.value + k * this.prior(a, enacted)) / (e.visits + k);
  }

  /**
   * G(a) once tried anywhere (shifted by E(enacted, type) − E(type)), else the mean of what its
   * event type (after the fault just enacted, when that pair was tried), its fault and its delay
   * earned.
   */
  private prior(a: TriggeredAction | null, enacted: string): number {
    const g = this.global.get(describeTrigger(a));
    if (a === null) return g?.value ?? this.o.initialValue;
    const type = this.events.get(a.on);
    const typeAfter = this.after.get(`${enacted}>${a.on}`);
    // G(a) is over every context: shift it by how much better its event type does after this fault.
    if (g) return g.value + (typeAfter && type ? typeAfter.value - type.value : 0);
    const init = this.o.initialValue;
    const e = typeAfter?.value ?? type?.value ?? init;
    const f = this.faults.get(faultKey(a))?.value ?? init;
    const d = this.delays.get(String(a.delayMs))?.value ?? init;
    return (e + f + d) / 3;
  }

  /**
   * UCB1's bonus, mixed over the action and its factors: an event type, a fault and a delay rarely
   * tried are each worth a look, and so, less, is a combination never tried.
   */
  private bonus(a: TriggeredAction | null, logN: number): number {
    const ucb = (visits: number | undefined): number => Math.sqrt(logN / ((visits ?? 0) + 1));
    const own = ucb(this.global.get(describeTrigger(a))?.visits);
    if (a === null) return own;
    return (
      (own +
        ucb(this.events.get(a.on)?.visits) +
        ucb(this.faults.get(faultKey(a))?.visits) +
        ucb(this.delays.get(String(a.delayMs))?.visits)) /
      4
    );
  }
}

/**
 * A saved Q row names the window's state and the fault the step enacted before arming
 * (`state|kill:leader`): the arming decision is taken knowing that fault.
 */
function rowKey(state: string, enacted: string): string {
  return `${state}${ROW_SEPARATOR}${enacted}`;
}

/** A saved row's state and enacted fault (a row saved before arming knew the fault: `none`). */
function parseRowKey(key: string): { state: string; enacted: string } {
  const at = key.lastIndexOf(ROW_SEPARATOR);
  return at < 0 ? { state: key, enacted: 'none' } : { state: key.slice(0, at), enacted: key.slice(at + 1) };
}

/** `kill:leader`, `start-partition`, `none`: the fault a step enacted, as the E(enacted, type) key. */
function enactedKey(fault: Fault | null): string {
  if (fault === null) return 'none';
  return typeof fault.value === 'string' ? `${fault.f}:${fault.value}` : fault.f;
}

function faultKey(a: TriggeredAction): string {
  return `${a.f}:${a.target}`;
}

/** A running mean whose step never falls below `MIN_MEAN_STEP` (rewards drift). */
function mean(table: Map<string, Entry>, key: string, reward: number): void {
  const e = table.get(key) ?? { value: 0, visits: 0 };
  e.visits++;
  e.value += Math.max(1 / e.visits, MIN_MEAN_STEP) * (reward - e.value);
  table.set(key, e);
}
