import type { FaultKind, FaultValue } from '../../../src/core/fault.js';
import type { ActionSpace } from '../../../src/policy/policy.js';

const VALUES: Partial<Record<FaultKind, readonly FaultValue[]>> = {
  kill: ['one', 'leader'],
  pause: ['one', 'leader'],
  'start-partition': ['halves', 'isolate', 'leader'],
};

/** A small action space with a leader target: kill, pause and partition, each with its undo. */
export const SPACE: ActionSpace = {
  kinds: ['kill', 'start', 'pause', 'resume', 'start-partition', 'stop-partition'],
  valuesOf: (k) => VALUES[k] ?? [null],
};
