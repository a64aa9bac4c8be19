import type { LiveRun } from './live-run.js';

/** What a later run seeds from (`--seed-from`): the policy's values and the mined log templates. */
export function saveLearning(live: LiveRun): void {
  const { plan, store, parts } = live;
  if (plan.policy) store.savePolicy(plan.policy.name, plan.policy.save());
  store.saveLogTemplates(parts.observation.logEvents.drain.templates());
}
