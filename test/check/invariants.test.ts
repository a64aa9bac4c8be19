import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkInvariants, InvariantEvents } from '../../src/check/invariants.js';
import type { Event, EventAttrs } from '../../src/core/event.js';

let clock = 0;
function ev(node: string, type: string, attrs?: EventAttrs): Event {
  clock += 10;
  return { ts: clock, node, source: 'probe', type, ...(attrs ? { attrs } : {}) };
}

describe('checkInvariants', () => {
  it('accepts a clean history', () => {
    const events = [
      ev('n1', 'node-start', { term: 0, commit: 0 }),
      ev('n1', 'become-candidate', { term: 1 }),
      ev('n2', 'vote-granted', { term: 1, candidate: 'n1' }),
      ev('n2', 'vote-granted', { term: 1, candidate: 'n1' }),
      ev('n1', 'become-leader', { term: 1 }),
      ev('n1', 'commit-advance', { term: 1, commit: 1 }),
      ev('n1', 'commit-advance', { term: 1, commit: 5 }),
      ev('n2', 'become-leader', { term: 2 }),
    ];
    expect(checkInvariants(events)).toEqual([]);
  });

  it('reports two leaders in one term, with both events', () => {
    const a = ev('n1', 'become-leader', { term: 3 });
    const b = ev('n3', 'become-leader', { term: 3 });
    const violations = checkInvariants([b, a]); // order of the input does not matter
    expect(violations).toHaveLength(1);
    expect(violations[0].name).toBe('election-safety');
    expect(violations[0].message).toBe('two leaders in term 3: n1 and n3');
    expect(violations[0].events).toEqual([a, b]);
  });

  it('reports a node voting for two candidates in a term, even across a restart', () => {
    const events = [
      ev('n2', 'vote-granted', { term: 4, candidate: 'n1' }),
      ev('n2', 'node-start', { term: 4, commit: 0 }),
      ev('n2', 'vote-granted', { term: 4, candidate: 'n3' }),
    ];
    const [v] = checkInvariants(events);
    expect(v.name).toBe('vote-once-per-term');
    expect(v.message).toBe('n2 voted for n1 and then for n3 in term 4');
  });

  it('forgets votes of a node that restarted with no state', () => {
    const events = [
      ev('n2', 'vote-granted', { term: 4, candidate: 'n1' }),
      ev('n2', 'node-start', { term: 0, commit: 0 }),
      ev('n2', 'vote-granted', { term: 4, candidate: 'n3' }),
    ];
    expect(checkInvariants(events)).toEqual([]);
  });

  it('reports commit and term going backwards within an incarnation, not across restarts', () => {
    const events = [
      ev('n1', 'commit-advance', { term: 2, commit: 9 }),
      ev('n1', 'commit-advance', { term: 2, commit: 7 }),
      ev('n1', 'become-follower', { term: 1 }),
      ev('n1', 'node-start', { term: 2, commit: 3 }),
      ev('n1', 'commit-advance', { term: 2, commit: 4 }),
    ];
    expect(checkInvariants(events).map((v) => v.name)).toEqual(['commit-monotonic', 'term-monotonic']);
  });

  it('reports failed assertions and ignores non-probe events', () => {
    const events: Event[] = [
      ev('n1', 'assertion-failed'),
      { ts: 1, node: 'n2', source: 'log', type: 'become-leader', attrs: { term: 1 } },
      { ts: 2, node: 'n3', source: 'log', type: 'become-leader', attrs: { term: 1 } },
    ];
    expect(checkInvariants(events).map((v) => v.name)).toEqual(['node-assertion']);
  });

  it('never reports election safety when each term has one leader (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 20 }), fc.constantFrom('n1', 'n2', 'n3')), {
          maxLength: 60,
        }),
        (pairs) => {
          const owner = new Map<number, string>();
          const events = pairs.map(([term, node], i) => {
            if (!owner.has(term)) owner.set(term, node);
            return {
              ts: i,
              node: owner.get(term)!,
              source: 'probe' as const,
              type: 'become-leader',
              attrs: { term },
            };
          });
          // A node may become leader of many terms, in any order across nodes.
          return checkInvariants(events).every((v) => v.name !== 'election-safety');
        },
      ),
    );
  });

  it('gives the same violations on the events InvariantEvents keeps as on all of them (property)', () => {
    const types = [
      'node-start',
      'become-leader',
      'vote-granted',
      'commit-advance',
      'append-accepted',
      'send',
      'assertion-failed',
    ];
    const arbEvent = fc.record({
      node: fc.constantFrom('n1', 'n2', 'n3'),
      type: fc.constantFrom(...types),
      source: fc.constantFrom('probe' as const, 'probe' as const, 'log' as const),
      term: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
      commit: fc.integer({ min: 0, max: 5 }),
      candidate: fc.constantFrom('n1', 'n2', 'n3'),
    });
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 80 }), (specs) => {
        const events: Event[] = specs.map((e, i) => ({
          ts: i,
          node: e.node,
          source: e.source,
          type: e.type,
          attrs: {
            ...(e.term !== undefined ? { term: e.term } : {}),
            commit: e.commit,
            candidate: e.candidate,
          },
        }));
        const filter = new InvariantEvents();
        const kept = events.filter((e) => filter.keep(e));
        const all = checkInvariants(events).map((v) => v.message);
        expect(checkInvariants(kept).map((v) => v.message)).toEqual(all);
      }),
    );
  });

  it('keeps far fewer events than a steady leader emits', () => {
    const filter = new InvariantEvents();
    let kept = 0;
    for (let i = 0; i < 1000; i++) {
      if (filter.keep(ev('n2', 'append-accepted', { term: 3, index: i, commit: i }))) kept++;
      if (filter.keep({ ts: i, node: 'n2', source: 'probe', type: 'send', attrs: { peer: 'n1', msg: i } }))
        kept++;
    }
    expect(kept).toBe(1); // the first one, for its term
  });
});
