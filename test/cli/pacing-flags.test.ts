import { describe, expect, it } from 'vitest';

import { configFromFlags, parsePace } from '../../src/cli/run.js';

const BASE = {
  system: 'kvraft',
  time: '60s',
  policy: 'adaptive',
  faults: 'partition,kill',
  workload: 'register',
  bug: [],
  store: 'store',
  network: 'auto',
};

describe('pacing flags', () => {
  it('--pace F:Q reads fault and quiet steps; anything else is refused with what to write', () => {
    expect(parsePace('4:2')).toEqual({ faultSteps: 4, quietSteps: 2 });
    expect(parsePace(undefined)).toBeUndefined();
    for (const bad of ['4', '0:2', '4:0', 'a:b', '4:2:1']) {
      expect(() => parsePace(bad)).toThrow(`--pace: "${bad}" is not FAULT_STEPS:QUIET_STEPS`);
    }
  });

  it('--warmup and --pace reach the run config; without them, no warm-up and faults every step', () => {
    const config = configFromFlags({ ...BASE, warmup: '5s', pace: '3:1' });
    expect(config.warmupMs).toBe(5000);
    expect(config.pace).toEqual({ faultSteps: 3, quietSteps: 1 });
    const plain = configFromFlags(BASE);
    expect(plain.warmupMs).toBe(0);
    expect(plain.pace).toBeUndefined();
    expect(() => configFromFlags({ ...BASE, warmup: 'soon' })).toThrow(/^--warmup: /);
  });
});
