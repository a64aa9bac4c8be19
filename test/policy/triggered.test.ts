import { describe, expect, it } from 'vitest';

import type { Fault } from '../../src/core/fault.js';
import { Rng } from '../../src/core/random.js';
import { describeTrigger, type TriggeredAction } from '../../src/core/trigger.js';
import { createPolicy } from '../../src/policy/index.js';
import type { ActionSpace, ArmContext } from '../../src/policy/policy.js';
import { SPACE } from './_helpers/space.js';
import {
  TRIGGER_AFTER_STATE,
  TRIGGER_DELAY_STATE,
  TRIGGER_EVENT_STATE,
  TRIGGER_FAULT_STATE,
  TRIGGER_GLOBAL_STATE,
  TriggeredPolicy,
} from '../../src/policy/triggered.js';

/** Per event type: kill ×3 targets, pause ×3, start-partition ×2, each at 3 delays. */
const PER_TYPE = (3 + 3 + 2) * 3;

function ctx(eventTypes: readonly string[], state: string | undefined, rng: Rng): ArmContext {
  return { state, space: SPACE, rng, schedule: 0, step: 0, eventTypes };
}

describe('TriggeredPolicy', () => {
  it('offers triggers on the event types observed so far, up to its limit, and none', () => {
    const policy = new TriggeredPolicy({ eventTypes: 2 });
    const rng = new Rng(1);
    expect(policy.actions(ctx([], undefined, rng))).toEqual([null]);
    expect(policy.actions(ctx(['vote-granted'], undefined, rng))).toHaveLength(PER_TYPE + 1);
    const three = policy.actions(ctx(['a', 'become-leader', 'vote-granted'], undefined, rng));
    expect(three).toHaveLength(2 * PER_TYPE + 1);
    // The most recently observed ones (last in the list) are kept.
    expect(new Set(three.map((a) => a?.on))).toEqual(new Set(['become-leader', 'vote-granted', undefined]));
    const kinds = new Set(three.filter((a) => a !== null).map((a) => `${a.f}:${a.target}+${a.delayMs}`));
    expect(kinds).toContain('kill:event+0');
    expect(kinds).toContain('start-partition:isolate+50');
    expect(kinds).not.toContain('member-remove:event+0'); // not in the space
  });

  it('offers no leader target when the space has no leader', () => {
    const policy = new TriggeredPolicy();
    const noLeader: ActionSpace = { kinds: ['kill'], valuesOf: () => ['one'] };
    const actions = policy.actions({ ...ctx(['x'], undefined, new Rng(1)), space: noLeader });
    expect(actions.filter((a) => a?.target === 'leader')).toEqual([]);
    expect(actions).toHaveLength(2 * 3 + 1);
  });

  it('arms what pays off: a trigger whose windows are new is chosen most, once learned', () => {
    const policy = new TriggeredPolicy({ epsilon: 0 });
    const rng = new Rng(7);
    const types = ['append-accepted', 'become-leader', 'vote-granted'];
    const good = 'on:vote-granted>kill:event+0ms';
    let picks = 0;
    for (let i = 0; i < 400; i++) {
      const armed = policy.arm(ctx(types, 's', rng));
      const hit = describeTrigger(armed) === good;
      if (i >= 300 && hit) picks++;
      policy.learn({
        state: 's',
        action: null,
        next: 's',
        seenBefore: hit ? 0 : 50,
        armed,
        fired: armed !== null,
      });
    }
    expect(picks).toBeGreaterThan(50);
    const best: TriggeredAction = { on: 'vote-granted', f: 'kill', target: 'event', delayMs: 0 };
    expect(policy.value('s', best)).toBeGreaterThan(policy.value('s', null));
    // What its fault earned is a prior for the same fault on an event type never seen.
    const untried: TriggeredAction = { on: 'new-type', f: 'kill', target: 'event', delayMs: 5 };
    const other: TriggeredAction = { on: 'new-type', f: 'pause', target: 'others', delayMs: 5 };
    expect(policy.value('fresh', untried)).toBeGreaterThan(policy.value('fresh', other));
  });

  it('values a trigger by the fault the step enacted: an event that fault sets in motion is armed after it', () => {
    const policy = new TriggeredPolicy({ epsilon: 0 });
    const rng = new Rng(13);
    const types = ['append-accepted', 'become-leader', 'vote-granted'];
    const killLeader: Fault = { f: 'kill', value: 'leader' };
    const pauseOne: Fault = { f: 'pause', value: 'one' };
    // Only after the leader's kill does an election follow, so only then does a trigger on
    // become-leader reach new states; after a follower's pause it is worth no more than any other.
    const picks = { kill: 0, pause: 0 };
    for (let i = 0; i < 800; i++) {
      const enacted = i % 2 === 0 ? killLeader : pauseOne;
      const armed = policy.arm({ ...ctx(types, 's', rng), enacted });
      const onElection = armed?.on === 'become-leader';
      if (i >= 600 && onElection) picks[enacted === killLeader ? 'kill' : 'pause']++;
      const pays = onElection && enacted === killLeader;
      policy.learn({ state: 's', action: enacted, next: 's', seenBefore: pays ? 0 : 50, armed, fired: true });
    }
    expect(picks.kill).toBeGreaterThan(60);
    expect(picks.kill).toBeGreaterThan(2 * picks.pause);
    const a: TriggeredAction = { on: 'become-leader', f: 'kill', target: 'event', delayMs: 0 };
    expect(policy.value('s', a, killLeader)).toBeGreaterThan(policy.value('s', a, pauseOne));
    expect(
      policy.save().some((r) => r.state === TRIGGER_AFTER_STATE && r.action === 'kill:leader>become-leader'),
    ).toBe(true);
  });

  it('tries a new event type early (optimistic priors)', () => {
    const policy = new TriggeredPolicy({ epsilon: 0 });
    const rng = new Rng(3);
    for (let i = 0; i < 100; i++) {
      const armed = policy.arm(ctx(['old'], 's', rng));
      policy.learn({ state: 's', action: null, next: 's', seenBefore: 20, armed, fired: true });
    }
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const armed = policy.arm(ctx(['new', 'old'], 's', rng));
      seen.add(armed?.on ?? 'none');
      policy.learn({ state: 's', action: null, next: 's', seenBefore: 20, armed, fired: true });
    }
    expect(seen).toContain('new');
  });

  it('learns the immediate fault as adaptive does (arming is a second decision)', () => {
    const policy = createPolicy('triggered');
    const rng = new Rng(5);
    const fault = policy.decide(ctx(['x'], undefined, rng));
    const armed = policy.arm!(ctx(['x'], undefined, rng));
    policy.learn({ state: undefined, action: fault, next: 's1', seenBefore: 0, armed, fired: false });
    const rows = policy.save();
    expect(rows.some((r) => r.state === '*' && !r.action.startsWith('on:'))).toBe(true);
    expect(rows.some((r) => r.state === TRIGGER_GLOBAL_STATE && r.action === describeTrigger(armed))).toBe(
      true,
    );
  });

  it('saves and loads its values: a loaded policy values and chooses alike', () => {
    const a = new TriggeredPolicy({ epsilon: 0 });
    const rng = new Rng(11);
    const types = ['become-leader', 'vote-granted'];
    let state: string | undefined;
    for (let i = 0; i < 60; i++) {
      const fault = a.decide(ctx(types, state, rng));
      const armed = a.arm(ctx(types, state, rng));
      const next = `s${i % 4}`;
      a.learn({ state, action: fault, next, seenBefore: i % 5, armed, fired: i % 2 === 0 });
      state = next;
    }
    const rows = a.save();
    for (const marker of [
      TRIGGER_GLOBAL_STATE,
      TRIGGER_AFTER_STATE,
      TRIGGER_EVENT_STATE,
      TRIGGER_FAULT_STATE,
      TRIGGER_DELAY_STATE,
    ]) {
      expect(rows.some((r) => r.state === marker)).toBe(true);
    }
    expect(rows.some((r) => r.state.startsWith('s1|') && r.action.startsWith('on:'))).toBe(true);
    const b = new TriggeredPolicy({ epsilon: 0 });
    b.load(rows);
    expect(b.save()).toEqual(expect.arrayContaining([...rows]));
    expect(b.save()).toHaveLength(rows.length);
    for (const x of a.actions(ctx(types, 's1', rng))) expect(b.value('s1', x)).toBeCloseTo(a.value('s1', x));
    expect(describeTrigger(b.arm(ctx(types, 's1', new Rng(2))))).toBe(
      describeTrigger(a.arm(ctx(types, 's1', new Rng(2)))),
    );
  });
});
