import { describe, expect, it } from 'vitest';

import type { Fault } from '../../src/core/fault.js';
import { Rng } from '../../src/core/random.js';
import type { TriggeredAction } from '../../src/core/trigger.js';
import { AdaptivePolicy } from '../../src/policy/adaptive.js';
import { CorpusPolicy } from '../../src/policy/corpus.js';
import { createPolicy } from '../../src/policy/index.js';
import { describeFollowed, FREE, type ActionSpace } from '../../src/policy/policy.js';
import { SPACE } from './_helpers/space.js';

const TYPES = ['become-leader', 'vote-granted', 'append-accepted'];

interface Step {
  readonly fault: Fault | null;
  readonly armed: TriggeredAction | null;
}

/**
 * Runs one schedule as the campaign does (reset, then per step: decide, arm, learn), the window of
 * step i new when `novel(i)`; returns what the policy decided.
 */
function schedule(policy: CorpusPolicy, rng: Rng, steps: number, novel: (i: number) => boolean): Step[] {
  policy.resetEpisode();
  const out: Step[] = [];
  let state: string | undefined;
  for (let step = 0; step < steps; step++) {
    const ctx = { state, space: SPACE, rng, schedule: 0, step };
    const fault = policy.decide(ctx);
    const armed = policy.arm({ ...ctx, eventTypes: TYPES, enacted: fault });
    out.push({ fault, armed });
    const next = `s${rng.int(1_000_000)}`;
    policy.learn({ state, action: fault, next, seenBefore: novel(step) ? 0 : 3, armed, fired: false });
    state = next;
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

describe('CorpusPolicy', () => {
  it('is the `corpus` policy', () => {
    expect(createPolicy('corpus')).toBeInstanceOf(CorpusPolicy);
  });

  it('keeps a schedule whose windows reached a new state, cut after its last one', () => {
    const policy = new CorpusPolicy({ replayEvery: 0 });
    const rng = new Rng(1);
    const nothingNew = schedule(policy, rng, 5, () => false);
    const ran = schedule(policy, rng, 6, (i) => i === 1 || i === 3);
    policy.resetEpisode(); // the next schedule starts: the last one is kept
    expect(nothingNew).toHaveLength(5);
    expect(policy.corpus).toHaveLength(1);
    const [entry] = policy.corpus;
    expect(entry.genes).toEqual(ran.slice(0, 4));
    expect(entry.novel).toEqual([false, true, false, true]);
  });

  it('replays a kept sequence, mutated, then decides on its own', () => {
    const policy = new CorpusPolicy({ replayEvery: 1 });
    const rng = new Rng(3);
    const first = schedule(policy, rng, 6, (i) => i === 2 || i === 4);
    const mutations = new Set<string>();
    for (let n = 0; n < 40; n++) {
      schedule(policy, rng, 8, () => false);
      const plan = policy.currentPlan;
      expect(plan).toBeDefined();
      mutations.add(policy.lastMutation!);
      // Every replayed decision is one the kept sequence took (only one sequence was ever kept).
      for (const p of plan!) {
        if (p.fault !== FREE)
          expect(first.some((g) => same({ ...g, armed: null }, { ...p, armed: null }))).toBe(true);
        if (p.armed !== FREE)
          expect(first.map((g) => JSON.stringify(g.armed))).toContain(JSON.stringify(p.armed));
      }
      expect(plan!.length).toBeGreaterThanOrEqual(1);
      expect(describeFollowed(policy.episode()!)).toMatch(
        /^replayed a kept fault sequence \((cut|drop|free|splice): \d+ steps/,
      );
    }
    expect(mutations).toEqual(new Set(['cut', 'drop', 'free', 'splice']));
  });

  it('enacts and arms what the plan says, step by step', () => {
    const policy = new CorpusPolicy({ replayEvery: 1 });
    const rng = new Rng(5);
    schedule(policy, rng, 6, (i) => i === 5);
    for (let n = 0; n < 20; n++) {
      const ran = schedule(policy, rng, 8, () => false);
      // A spliced plan may be longer than the schedule: its tail is never reached.
      const plan = policy.currentPlan!.slice(0, ran.length);
      expect(plan.length).toBeGreaterThan(0);
      plan.forEach((p, i) => {
        if (p.fault !== FREE) expect(ran[i].fault).toEqual(p.fault);
        if (p.armed !== FREE) expect(ran[i].armed).toEqual(p.armed);
      });
    }
  });

  it('never replays without a kept sequence, nor when told not to', () => {
    const never = new CorpusPolicy({ replayEvery: 0 });
    const rng = new Rng(2);
    for (let n = 0; n < 5; n++) schedule(never, rng, 4, () => true);
    expect(never.corpus.length).toBeGreaterThan(0);
    expect(never.replays).toBe(0);
    expect(never.episode()).toBeUndefined();
    const empty = new CorpusPolicy({ replayEvery: 1 });
    schedule(empty, rng, 4, () => false);
    schedule(empty, rng, 4, () => false);
    expect(empty.corpus).toHaveLength(0);
    expect(empty.replays).toBe(0);
  });

  it('keeps at most `size` sequences', () => {
    const policy = new CorpusPolicy({ size: 3 });
    const rng = new Rng(9);
    for (let n = 0; n < 12; n++) schedule(policy, rng, 4, (i) => i === n % 4);
    policy.resetEpisode();
    expect(policy.corpus).toHaveLength(3);
  });

  it('replays every other schedule by default, once it has a sequence', () => {
    const policy = new CorpusPolicy();
    const rng = new Rng(4);
    const replayed: boolean[] = [];
    for (let n = 0; n < 6; n++) {
      schedule(policy, rng, 3, (i) => i === 0);
      replayed.push(policy.episode() !== undefined);
    }
    expect(replayed).toEqual([false, true, false, true, false, true]);
  });

  it('validates its options', () => {
    expect(() => new CorpusPolicy({ replayEvery: 1.5 })).toThrow(
      /replayEvery should be a non-negative integer/,
    );
    expect(() => new CorpusPolicy({ size: 0 })).toThrow(/size should be a positive integer/);
  });
});

describe('AdaptivePolicy.follow', () => {
  it('tracks a replayed fault as its own: its undo is offered after it', () => {
    const space: ActionSpace = { kinds: ['start'], valuesOf: () => ['all'] };
    const chosen = (follow: boolean): Set<string> => {
      const out = new Set<string>();
      for (let seed = 0; seed < 20; seed++) {
        const policy = new AdaptivePolicy();
        if (follow) policy.follow({ f: 'kill', value: 'leader' });
        out.add(
          policy.decide({ state: undefined, space, rng: new Rng(seed), schedule: 0, step: 0 })?.f ?? 'noop',
        );
      }
      return out;
    };
    expect(chosen(false)).toEqual(new Set(['noop']));
    expect(chosen(true)).toContain('start');
  });
});

describe('CorpusPolicy: sequences shared between campaigns', () => {
  it('shares the sequences it kept itself, and adopts others once, never sharing them again', () => {
    const mine = new CorpusPolicy({ replayEvery: 0 });
    const theirs = new CorpusPolicy({ replayEvery: 0 });
    const rng = new Rng(3);
    schedule(mine, rng, 4, (i) => i === 2);
    mine.resetEpisode();
    const shared = mine.sequences();
    expect(shared).toHaveLength(1);
    expect(shared[0].novel).toEqual([false, false, true]);

    expect(theirs.adoptSequences(shared)).toBe(1);
    expect(theirs.adoptSequences(shared)).toBe(0);
    expect(theirs.corpus).toHaveLength(1);
    expect(theirs.corpus[0].genes).toEqual(shared[0].steps);
    // Taken, not kept: not passed on (no echo between campaigns).
    expect(theirs.sequences()).toEqual([]);
    // A sequence that reached nothing new, or whose steps and windows disagree, is not taken.
    expect(theirs.adoptSequences([{ steps: shared[0].steps, novel: [false, false, false] }])).toBe(0);
    expect(theirs.adoptSequences([{ steps: shared[0].steps.slice(1), novel: [true, true, true] }])).toBe(0);
  });

  it('keeps the corpus within its size when it adopts', () => {
    const policy = new CorpusPolicy({ replayEvery: 0, size: 2 });
    const steps = (n: number) => [{ fault: { f: 'kill', value: [`n${n}`] } as Fault, armed: null }];
    const added = policy.adoptSequences([1, 2, 3].map((n) => ({ steps: steps(n), novel: [true] })));
    expect(added).toBe(3);
    expect(policy.corpus).toHaveLength(2);
  });
});
