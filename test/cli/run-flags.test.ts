import { describe, expect, it } from 'vitest';

import { configFromFlags } from '../../src/cli/run.js';

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

describe('--startup-timeout', () => {
  it('reaches the run config; without it, 60 s', () => {
    expect(configFromFlags({ ...BASE, startupTimeout: '3m' }).startupTimeoutMs).toBe(180_000);
    expect(configFromFlags(BASE).startupTimeoutMs).toBe(60_000);
  });

  it('refuses what is not a positive duration, naming the flag', () => {
    expect(() => configFromFlags({ ...BASE, startupTimeout: 'soon' })).toThrow(/^--startup-timeout: /);
    expect(() => configFromFlags({ ...BASE, startupTimeout: '0s' })).toThrow(
      '--startup-timeout: Number must be greater than 0',
    );
  });
});
