import { TRIGGER_DELAYS_MS, TRIGGER_FAULTS, type TriggeredAction } from '../../core/trigger.js';
import type { ActionSpace } from '../policy.js';

/**
 * Every triggered action over the given event types: each (fault, target) pair whose kind the run
 * enables (a `leader` target only where the space offers one), at each delay.
 */
export function triggerActions(eventTypes: readonly string[], space: ActionSpace): TriggeredAction[] {
  const pairs = TRIGGER_FAULTS.filter(
    ({ f, target }) =>
      space.kinds.includes(f) && (target !== 'leader' || space.valuesOf(f).includes('leader')),
  );
  const out: TriggeredAction[] = [];
  for (const on of eventTypes) {
    for (const { f, target } of pairs) {
      for (const delayMs of TRIGGER_DELAYS_MS) out.push({ on, f, target, delayMs });
    }
  }
  return out;
}
