import { parseTrigger } from '../core/trigger.js';
import type { StoredFault, StoredStep } from '../store/run-reader.js';

/** What the triggers armed on one event type did over a run. */
export interface TriggerStat {
  /** The event type they waited for. */
  readonly on: string;
  /** Steps that armed a trigger on it. */
  readonly armed: number;
  /** Of those, steps where it fired (its event came before the step ended). */
  readonly fired: number;
  /** Of the steps where it fired, those whose window reached a state never seen before. */
  readonly firedNewStates: number;
}

/** A step row's armed trigger: its fault column says `kill:leader + on:become-leader>kill:event+0ms`. */
const ARMED_SEPARATOR = ' + ';

/**
 * Per event type, how often a trigger was armed on it, how often it fired, and how often a firing
 * led to a new state: the event types that are worth waiting for first (highest share fired, then
 * most armed). Empty for a run whose policy arms nothing.
 */
export function triggerStats(steps: readonly StoredStep[], faults: readonly StoredFault[]): TriggerStat[] {
  const firedSteps = new Set(
    faults.filter((f) => f.trigger !== null && f.step !== null).map((f) => `${f.schedule}:${f.step}`),
  );
  const byType = new Map<string, { armed: number; fired: number; firedNewStates: number }>();
  for (const step of steps) {
    const at = step.fault?.lastIndexOf(ARMED_SEPARATOR) ?? -1;
    const action = at < 0 ? undefined : parseTrigger(step.fault!.slice(at + ARMED_SEPARATOR.length));
    if (!action) continue;
    const stat = byType.get(action.on) ?? { armed: 0, fired: 0, firedNewStates: 0 };
    stat.armed++;
    if (firedSteps.has(`${step.schedule}:${step.step}`)) {
      stat.fired++;
      if (step.newState) stat.firedNewStates++;
    }
    byType.set(action.on, stat);
  }
  return [...byType]
    .map(([on, stat]) => ({ on, ...stat }))
    .sort((a, b) => b.fired / b.armed - a.fired / a.armed || b.armed - a.armed || a.on.localeCompare(b.on));
}
