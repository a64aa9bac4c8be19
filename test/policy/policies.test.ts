import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { FAULT_KINDS, type Fault, type FaultKind, type FaultValue } from '../../src/core/fault.js';
import { Rng } from '../../src/core/random.js';
import { AdaptivePolicy, noveltyReward } from '../../src/policy/adaptive.js';
import { createPolicy, isPolicyName, POLICY_NAMES } from '../../src/policy/index.js';
import { MalloryPolicy } from '../../src/policy/mallory.js';
import type { ActionSpace, DecideContext, Policy } from '../../src/policy/policy.js';

const VALUES: readonly FaultValue[] = ['one', 'minority', 'majority', 'all', 'leader', 'halves', 'isolate'];

function space(
  kinds: readonly FaultKind[],
  values: Partial<Record<FaultKind, readonly FaultValue[]>> = {},
): ActionSpace {
  return { kinds, valuesOf: (k) => values[k] ?? ['one', 'all'] };
}

function ctx(s: ActionSpace, state: string | undefined, rng: Rng, step = 0): DecideContext {
  return { state, space: s, rng, schedule: 0, step };
}

function inSpace(s: ActionSpace, f: Fault | null): boolean {
  return f === null || (s.kinds.includes(f.f) && s.valuesOf(f.f).includes(f.value));
}

describe('policies', () => {
  it('only pick actions from the space, whatever they learned', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...POLICY_NAMES),
        fc.subarray([...FAULT_KINDS], { minLength: 1 }),
        fc.subarray([...VALUES], { minLength: 1 }),
        fc.array(fc.tuple(fc.option(fc.constantFrom('s1', 's2', 's3'), { nil: undefined }), fc.nat(3)), {
          maxLength: 40,
        }),
        fc.integer(),
        (name, kinds, values, steps, seed) => {
          const s = space(kinds, Object.fromEntries(kinds.map((k) => [k, values])));
          const policy = createPolicy(name);
          const rng = new Rng(seed);
          let state: string | undefined;
          for (const [next, seen] of steps) {
            const action = policy.decide(ctx(s, state, rng));
            expect(inSpace(s, action)).toBe(true);
            policy.learn({ state, action, next: next ?? 's0', seenBefore: seen });
            state = next;
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('are created by name', () => {
    for (const n of POLICY_NAMES) expect(createPolicy(n).name).toBe(n);
    expect(isPolicyName('adaptive')).toBe(true);
    expect(isPolicyName('greedy')).toBe(false);
  });
});

describe('MalloryPolicy', () => {
  const s = space(['kill', 'pause', 'start-partition']);

  it('picks the no-op and learns nothing while the state has not arrived', () => {
    const p = new MalloryPolicy();
    const rng = new Rng(1);
    for (let i = 0; i < 20; i++) expect(p.decide(ctx(s, undefined, rng))).toBeNull();
    p.learn({ state: undefined, action: null, next: 'x', seenBefore: 3 });
    expect(p.save()).toEqual([]);
  });

  it('applies Q ← 0.9·Q + 0.1·(r + 0.6·max Q(s′)) with r = −1 for a seen state, 0 for a new one', () => {
    const p = new MalloryPolicy();
    p.decide(ctx(s, 'a', new Rng(1)));
    p.learn({ state: 'a', action: { f: 'kill', value: 'one' }, next: 'b', seenBefore: 2 });
    expect(p.value('a', 'kill')).toBeCloseTo(-0.1, 12);
    p.learn({ state: 'a', action: { f: 'kill', value: 'all' }, next: 'c', seenBefore: 0 });
    expect(p.value('a', 'kill')).toBeCloseTo(-0.09, 12);
    // Every action of b known and negative: max Q(b) < 0 propagates.
    for (const f of ['kill', 'pause', 'start-partition'] as const) {
      p.learn({ state: 'b', action: { f, value: 'one' }, next: 'z', seenBefore: 1 });
    }
    p.learn({ state: 'b', action: null, next: 'z', seenBefore: 1 });
    p.learn({ state: 'a', action: null, next: 'b', seenBefore: 0 });
    expect(p.value('a', 'noop')).toBeCloseTo(0.1 * 0.6 * -0.1, 12);
  });

  it('chooses almost uniformly at temperature 100', () => {
    const p = new MalloryPolicy();
    const rng = new Rng(5);
    p.decide(ctx(s, 'a', rng));
    for (let i = 0; i < 50; i++)
      p.learn({ state: 'a', action: { f: 'kill', value: 'one' }, next: 'b', seenBefore: 1 });
    expect(p.value('a', 'kill')).toBeLessThan(-0.9);
    const counts = new Map<string, number>();
    for (let i = 0; i < 8000; i++) {
      const k = p.decide(ctx(s, 'a', rng))?.f ?? 'noop';
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    // exp(−1/100) ≈ 0.99: kill is picked about as often as the others (≈ 2000 each).
    for (const k of ['kill', 'pause', 'start-partition', 'noop']) expect(counts.get(k)).toBeGreaterThan(1800);
  });

  it('saves and loads its Q-table', () => {
    const p = new MalloryPolicy();
    p.decide(ctx(s, 'a', new Rng(1)));
    p.learn({ state: 'a', action: { f: 'pause', value: 'one' }, next: 'b', seenBefore: 1 });
    const q = new MalloryPolicy();
    q.load(p.save());
    expect(q.save()).toEqual(p.save());
    expect(q.value('a', 'pause')).toBeCloseTo(-0.1, 12);
  });
});

/** A toy system: `pause:one` always reaches a new state; everything else one old state. */
function runToy(policy: Policy, steps: number, seed: number): number {
  const s = space(['kill', 'pause', 'start-partition', 'bump-clock'], {
    'start-partition': ['halves', 'isolate'],
  });
  const rng = new Rng(seed);
  let state: string | undefined;
  let fresh = 0;
  let oldVisits = 0;
  let hits = 0;
  for (let i = 0; i < steps; i++) {
    if (i % 12 === 0) policy.resetEpisode?.();
    const action = policy.decide(ctx(s, state, rng, i));
    const good = action?.f === 'pause' && action.value === 'one';
    if (good && i >= steps / 2) hits++;
    const next = good ? `new${fresh++}` : 'old';
    const seenBefore = good ? 0 : oldVisits++;
    policy.learn({ state, action, next, seenBefore });
    state = next;
  }
  return hits / (steps / 2);
}

describe('AdaptivePolicy', () => {
  it('shifts its preference toward the action that pays off', () => {
    const adaptive = runToy(new AdaptivePolicy(), 400, 11);
    const random = runToy(createPolicy('random'), 400, 11);
    expect(adaptive).toBeGreaterThan(0.5);
    expect(random).toBeLessThan(0.25);
  });

  it('offers an undo only while its fault is active', () => {
    const s = space(['kill', 'start'], { kill: ['one'], start: ['all'] });
    const p = new AdaptivePolicy({ epsilon: 0 });
    const rng = new Rng(3);
    const first = p.decide(ctx(s, undefined, rng));
    expect(first?.f).not.toBe('start');
    // After a kill, `start` becomes available (untried, so UCB picks it soon).
    const seen: (string | undefined)[] = [];
    if (first?.f !== 'kill') {
      p.learn({ state: undefined, action: first, next: 'x', seenBefore: 0 });
    }
    for (let i = 0; i < 6; i++) {
      const a = p.decide(ctx(s, 'x', rng));
      seen.push(a?.f);
      p.learn({ state: 'x', action: a, next: 'x', seenBefore: 1 });
    }
    for (let i = 0; i < seen.length; i++) {
      if (seen[i] === 'start') expect(seen.slice(0, i)).toContain('kill');
    }
    expect(seen).toContain('start');
  });

  it('prefers an undo when nothing new has been seen for a while', () => {
    const s = space(['start-partition', 'stop-partition'], {
      'start-partition': ['halves'],
      'stop-partition': [null],
    });
    const p = new AdaptivePolicy({ epsilon: 0, undoBias: 1, stagnationSteps: 2 });
    const rng = new Rng(9);
    // Teach it that partitioning pays off, and stopping does not.
    for (let i = 0; i < 20; i++)
      p.learn({ state: 's', action: { f: 'start-partition', value: 'halves' }, next: 's', seenBefore: 0 });
    for (let i = 0; i < 20; i++)
      p.learn({ state: 's', action: { f: 'stop-partition', value: null }, next: 's', seenBefore: 100 });
    expect(p.decide(ctx(s, 's', rng))?.f).toBe('start-partition');
    // Stagnation: two windows with nothing new.
    p.learn({ state: 's', action: null, next: 's', seenBefore: 5 });
    p.learn({ state: 's', action: null, next: 's', seenBefore: 6 });
    expect(p.decide(ctx(s, 's', rng))?.f).toBe('stop-partition');
  });

  it('decays the novelty reward with visits, and round-trips save/load', () => {
    expect(noveltyReward(0)).toBe(1);
    expect(noveltyReward(3)).toBe(0.5);
    const p = new AdaptivePolicy();
    p.learn({ state: 'a', action: { f: 'kill', value: 'one' }, next: 'b', seenBefore: 0 });
    p.learn({ state: undefined, action: null, next: 'b', seenBefore: 3 });
    const q = new AdaptivePolicy();
    q.load(p.save());
    expect(q.save()).toEqual(p.save());
    expect(q.value('a', { f: 'kill', value: 'one' })).toBeCloseTo(
      p.value('a', { f: 'kill', value: 'one' }),
      12,
    );
    expect(() => new AdaptivePolicy({ alpha: 2 })).toThrow(/alpha/);
  });
});

describe('createPolicy', () => {
  it('rejects unknown names with the list of known ones', () => {
    expect(() => createPolicy('greedy')).toThrow(/random, mallory, adaptive/);
  });
});

describe('AdaptivePolicy kind prior', () => {
  it('starts an untried value of a kind from what the kind earned', () => {
    const p = new AdaptivePolicy();
    for (let i = 0; i < 5; i++)
      p.learn({ state: 's', action: { f: 'kill', value: 'one' }, next: 's', seenBefore: 99 });
    expect(p.value(undefined, { f: 'kill', value: 'leader' })).toBeCloseTo(
      p.value(undefined, { f: 'kill', value: 'one' }),
      12,
    );
    expect(p.value(undefined, { f: 'kill', value: 'leader' })).toBeLessThan(0.2);
    expect(p.value(undefined, { f: 'pause', value: 'one' })).toBe(1);
    const q = new AdaptivePolicy();
    q.load(p.save());
    expect(q.value(undefined, { f: 'kill', value: 'leader' })).toBeCloseTo(
      p.value(undefined, { f: 'kill', value: 'leader' }),
      12,
    );
  });
});
