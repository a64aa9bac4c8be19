import type { Coverage } from '../../abstraction/coverage.js';
import type { Policy } from '../../policy/policy.js';
import type { Seed } from '../create-run.js';
import type { Emit } from './emitter.js';

/** Seeds the policy's values and the states seen from an earlier run (`--seed-from`), and says so. */
export function applySeed(policy: Policy, seed: Seed, coverage: Coverage, emit: Emit): void {
  policy.load(seed.values);
  for (const s of seed.states) {
    coverage.seed(s.abstraction, s.id, JSON.parse(s.features) as string[], s.visits);
  }
  emit('message', describeSeed(seed));
}

function describeSeed(seed: Seed): string {
  const what = `seeded from ${seed.runDir} (${seed.status}): ${seed.values.length} policy values, ${seed.states.length} states, ${seed.templates.length} log templates`;
  return seed.values.length > 0
    ? what
    : `${what} — it saved no policy values (it ended before its first schedule did): the policy starts fresh`;
}
