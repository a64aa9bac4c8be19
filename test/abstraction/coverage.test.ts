import { describe, expect, it } from 'vitest';

import { Coverage } from '../../src/abstraction/coverage.js';
import { ArtifactAbstraction } from '../../src/abstraction/artifact.js';
import type { Event } from '../../src/core/event.js';

function win(
  index: number,
  types: string[],
): { index: number; startTs: number; endTs: number; events: Event[] } {
  return {
    index,
    startTs: index * 10,
    endTs: index * 10 + 10,
    events: types.map((type, i) => ({
      ts: index * 10 + i,
      node: i % 2 === 0 ? 'n1' : 'n2',
      source: 'probe',
      type,
    })),
  };
}

describe('Coverage', () => {
  it('counts distinct states, event types, pairs and transitions, and reports repeats', () => {
    const cov = new Coverage();
    const o1 = cov.observe(win(0, ['a', 'b', 'c', 'd']), null);
    expect(o1.seenBefore).toEqual({ artifact: 0, causal: 0 });
    const o2 = cov.observe(win(1, ['a', 'b', 'c', 'd']), { f: 'kill', value: 'one' });
    expect(o2.seenBefore.artifact).toBe(1);
    expect(o2.states.artifact.id).toBe(o1.states.artifact.id);
    cov.observe(win(2, ['x', 'y']), null);
    const snap = cov.snapshot();
    expect(snap.states_artifact).toBe(2);
    expect(snap.states_causal).toBe(2);
    expect(snap.event_types).toBe(6);
    expect(snap.intra_pairs).toBe(2); // a > c, b > d
    expect(snap.transitions_artifact).toBe(3);
    expect(snap.windows).toBe(3);
    expect(Object.keys(snap).some((k) => k.includes('states'))).toBe(true);
    expect(cov.counts('artifact').get(o1.states.artifact.id)).toBe(2);
  });

  it('seeded states count as seen for the reward but not as this campaign’s coverage', () => {
    const first = new Coverage();
    const o = first.observe(win(0, ['a', 'b', 'c', 'd']), null);
    const near = first.observe(win(1, ['a', 'b', 'c', 'd', 'e', 'f']), null);
    const seeded = new Coverage();
    for (const name of ['artifact', 'causal']) {
      seeded.seed(name, o.states[name].id, o.states[name].features, 3);
    }
    const again = seeded.observe(win(0, ['a', 'b', 'c', 'd']), null);
    expect(again.seenBefore).toEqual({ artifact: 3, causal: 3 });
    expect(again.states.artifact.id).toBe(o.states.artifact.id);
    expect(seeded.snapshot().states_artifact).toBe(1);
    // A similar window joins the seeded cluster exactly as it did in the first campaign.
    expect(seeded.observe(win(1, ['a', 'b', 'c', 'd', 'e', 'f']), null).states.artifact.id).toBe(
      near.states.artifact.id,
    );
  });

  it('rejects two abstractions with one name', () => {
    expect(() => new Coverage([new ArtifactAbstraction(), new ArtifactAbstraction()])).toThrow(
      /distinct names/,
    );
  });
});
