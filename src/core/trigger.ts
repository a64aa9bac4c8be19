import type { FaultKind } from './fault.js';

/**
 * Where a triggered fault lands, named relative to the event that fired it: `event` (the event's
 * node), `others` (every node but it), `isolate` (a partition cutting its node off from the rest),
 * `leader` (whoever leads when it fires).
 */
export type TriggerTarget = 'event' | 'others' | 'isolate' | 'leader';

/** The delays a triggered fault can wait after its event. */
export const TRIGGER_DELAYS_MS: readonly number[] = [0, 5, 50];

/** The (fault, target) pairs a trigger can take, for the kinds the run enables. */
export const TRIGGER_FAULTS: readonly { readonly f: FaultKind; readonly target: TriggerTarget }[] = [
  { f: 'kill', target: 'event' },
  { f: 'kill', target: 'others' },
  { f: 'kill', target: 'leader' },
  { f: 'pause', target: 'event' },
  { f: 'pause', target: 'others' },
  { f: 'pause', target: 'leader' },
  { f: 'start-partition', target: 'isolate' },
  { f: 'start-partition', target: 'leader' },
  { f: 'member-remove', target: 'event' },
];

/**
 * "When an event of type `on` is observed, do fault `f` on `target`, `delayMs` after it": armed for
 * the rest of a step, fired by the first matching event.
 */
export interface TriggeredAction {
  readonly on: string;
  readonly f: FaultKind;
  readonly target: TriggerTarget;
  readonly delayMs: number;
}

/** The key of "arm nothing" in saved policy values. */
export const NO_TRIGGER = 'on:none';

/** `on:become-leader>kill:event+5ms`, or `on:none`: the action's key in saved policy values. */
export function describeTrigger(action: TriggeredAction | null): string {
  if (action === null) return NO_TRIGGER;
  return `on:${action.on}>${action.f}:${action.target}+${action.delayMs}ms`;
}

const TRIGGER_TARGETS: readonly TriggerTarget[] = ['event', 'others', 'isolate', 'leader'];

/**
 * The action `describeTrigger` wrote, or undefined for `on:none` and anything else. The event type
 * is whatever comes before the last `>` (a mined log template may hold one).
 */
export function parseTrigger(text: string): TriggeredAction | undefined {
  const m = /^on:(.+)>([a-z-]+):([a-z]+)\+(\d+)ms$/.exec(text);
  if (!m || !(TRIGGER_TARGETS as readonly string[]).includes(m[3])) return undefined;
  return { on: m[1], f: m[2] as FaultKind, target: m[3] as TriggerTarget, delayMs: Number(m[4]) };
}
