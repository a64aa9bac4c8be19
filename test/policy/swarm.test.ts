import { describe, expect, it } from 'vitest';

import type { Fault, FaultKind, FaultValue } from '../../src/core/fault.js';
import { Rng } from '../../src/core/random.js';
import { createPolicy } from '../../src/policy/index.js';
import type { ActionSpace, DecideContext } from '../../src/policy/policy.js';
import { drawConfiguration, SwarmPolicy } from '../../src/policy/swarm.js';

const VALUES: Partial<Record<FaultKind, readonly FaultValue[]>> = {
  kill: ['one', 'minority', 'leader'],
  pause: ['one', 'leader'],
  'start-partition': ['halves', 'isolate', 'bridge', 'majorities-ring'],
};
const SPACE: ActionSpace = {
  kinds: ['kill', 'start', 'pause', 'resume', 'start-partition', 'stop-partition'],
  valuesOf: (k) => VALUES[k] ?? [null],
};

function ctx(rng: Rng, schedule: number, space: ActionSpace = SPACE): DecideContext {
  return { state: undefined, space, rng, schedule, step: 0 };
}

describe('SwarmPolicy', () => {
  it('is created by name', () => {
    expect(createPolicy('swarm')).toBeInstanceOf(SwarmPolicy);
  });

  it('keeps one configuration per schedule and draws only from it', () => {
    const policy = new SwarmPolicy();
    const rng = new Rng(7);
    const seen = new Set<string>();
    for (let schedule = 0; schedule < 30; schedule++) {
      policy.resetEpisode();
      for (let step = 0; step < 40; step++) {
        const fault = policy.decide(ctx(rng, schedule));
        const kept = policy.current;
        expect(kept).toBeDefined();
        if (fault !== null) {
          expect(kept?.get(fault.f)).toContain(fault.value);
        }
      }
      seen.add(JSON.stringify([...(policy.current ?? new Map<FaultKind, readonly FaultValue[]>())]));
    }
    // Configurations differ from schedule to schedule.
    expect(seen.size).toBeGreaterThan(10);
  });

  it('draws only kinds that can be enacted now', () => {
    const policy = new SwarmPolicy();
    const rng = new Rng(3);
    const space: ActionSpace = { ...SPACE, enactable: (k) => k !== 'start' && k !== 'resume' };
    for (let schedule = 0; schedule < 20; schedule++) {
      for (let step = 0; step < 20; step++) {
        const fault: Fault | null = policy.decide(ctx(rng, schedule, space));
        expect(fault?.f).not.toBe('start');
        expect(fault?.f).not.toBe('resume');
      }
    }
  });

  it('leaves out each kind and value about half the time, never every fault', () => {
    const rng = new Rng(11);
    const runs = 2000;
    let withStop = 0;
    let withBridge = 0;
    for (let i = 0; i < runs; i++) {
      const c = drawConfiguration(SPACE, rng);
      expect([...c.keys()].some((k) => k === 'kill' || k === 'pause' || k === 'start-partition')).toBe(true);
      for (const [kind, values] of c) {
        expect(values.length).toBeGreaterThan(0);
        for (const v of values) expect(SPACE.valuesOf(kind)).toContain(v);
      }
      if (c.has('stop-partition')) withStop++;
      if (c.get('start-partition')?.includes('bridge')) withBridge++;
    }
    // A kept undo in about half the configurations (a little more: those without a fault are redrawn).
    expect(withStop / runs).toBeGreaterThan(0.4);
    expect(withStop / runs).toBeLessThan(0.65);
    // A value needs its kind kept and itself: about a quarter.
    expect(withBridge / runs).toBeGreaterThan(0.2);
    expect(withBridge / runs).toBeLessThan(0.4);
  });
});
