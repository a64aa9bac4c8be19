import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { ArtifactAbstraction } from '../../src/abstraction/artifact.js';
import { CausalAbstraction, log2Bucket } from '../../src/abstraction/causal.js';
import { createAbstraction } from '../../src/abstraction/index.js';
import type { Event } from '../../src/core/event.js';
import type { Window } from '../../src/timeline/window.js';

const NODES = ['n1', 'n2', 'n3'];

function win(events: Event[], edges: Window['edges'] = []): Window {
  return { index: 0, startTs: 0, endTs: 1000, events, edges };
}

const rawEvents = fc.array(
  fc.record({ node: fc.constantFrom(...NODES), type: fc.constantFrom('a', 'b', 'c', 'become-leader') }),
  { maxLength: 40 },
);

describe('ArtifactAbstraction', () => {
  it('does not depend on node ids (any permutation of them gives the same state)', () => {
    fc.assert(
      fc.property(
        rawEvents,
        fc.constantFrom([0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0]),
        (raw, perm) => {
          const events: Event[] = raw.map((r, i) => ({ ts: i, node: r.node, source: 'log', type: r.type }));
          const renamed = events.map((e) => ({ ...e, node: NODES[perm[NODES.indexOf(e.node)]] }));
          const s1 = new ArtifactAbstraction().abstract(win(events));
          const s2 = new ArtifactAbstraction().abstract(win(renamed));
          expect(s2).toEqual(s1);
        },
      ),
    );
  });

  it('gives the same id to the same window, and sorted pair features', () => {
    const a = createAbstraction('artifact');
    const events: Event[] = [
      { ts: 1, node: 'n1', source: 'probe', type: 'tick' },
      { ts: 2, node: 'n1', source: 'probe', type: 'vote' },
    ];
    const s = a.abstract(win(events));
    expect(s.features).toEqual(['tick > vote']);
    expect(a.abstract(win(events)).id).toBe(s.id);
    expect(a.name).toBe('artifact');
  });
});

describe('CausalAbstraction', () => {
  it('does not depend on node ids either (roles replace them)', () => {
    fc.assert(
      fc.property(rawEvents, fc.constantFrom([1, 2, 0], [2, 0, 1], [0, 2, 1]), (raw, perm) => {
        const events: Event[] = [];
        const edges: { send: Event; recv: Event }[] = [];
        raw.forEach((r, i) => {
          const e: Event = { ts: 2 * i, node: r.node, source: 'probe', type: r.type };
          events.push(e);
          if (i % 3 === 0) {
            const to = NODES[(NODES.indexOf(r.node) + 1) % NODES.length];
            const send: Event = {
              ts: 2 * i + 1,
              node: r.node,
              source: 'probe',
              type: 'send',
              attrs: { msg: `m${i}` },
            };
            const recv: Event = {
              ts: 2 * i + 1,
              node: to,
              source: 'probe',
              type: 'recv',
              attrs: { msg: `m${i}` },
            };
            events.push(send, recv);
            edges.push({ send, recv });
          }
        });
        const rename = (e: Event): Event => ({ ...e, node: NODES[perm[NODES.indexOf(e.node)]] });
        const renamed = new Map(events.map((e) => [e, rename(e)]));
        const s1 = new CausalAbstraction().abstract(win(events, edges));
        const s2 = new CausalAbstraction().abstract(
          win(
            events.map((e) => renamed.get(e)!),
            edges.map(({ send, recv }) => ({ send: renamed.get(send)!, recv: renamed.get(recv)! })),
          ),
        );
        expect(s2).toEqual(s1);
      }),
    );
  });

  it('labels pairs with roles, adds cross-node pairs, leader count, silent nodes and term buckets', () => {
    const c = new CausalAbstraction();
    const send: Event = { ts: 4, node: 'n1', source: 'probe', type: 'send', attrs: { msg: 'm', peer: 'n2' } };
    const recv: Event = { ts: 5, node: 'n2', source: 'probe', type: 'recv', attrs: { msg: 'm', peer: 'n1' } };
    const events: Event[] = [
      { ts: 1, node: 'n1', source: 'probe', type: 'become-leader', attrs: { term: 2 } },
      { ts: 2, node: 'n3', source: 'log', type: 'L1' },
      { ts: 3, node: 'n1', source: 'probe', type: 'append' },
      send,
      recv,
      { ts: 6, node: 'n2', source: 'probe', type: 'ack', attrs: { role: 'follower', term: 7 } },
    ];
    const s = c.abstract(win(events, [{ send, recv }]));
    expect(s.features).toContain('p:L:become-leader > L:append');
    expect(s.features).toContain('x:L:append > F:ack');
    expect(s.features).toContain('s:leaders=1');
    expect(s.features).toContain('s:silent=0');
    expect(s.features).toContain(`b:term=${log2Bucket(5)}`);
    // Next window: n3 silent; roles carry over.
    const s2 = c.abstract(
      win([
        { ts: 10, node: 'n1', source: 'probe', type: 'append' },
        { ts: 11, node: 'n2', source: 'log', type: 'L2' },
      ]),
    );
    expect(s2.features).toContain('s:silent=1');
    expect(s2.features).toContain('s:leaders=1');
    c.resetEpisode();
    const s3 = c.abstract(win([{ ts: 20, node: 'n1', source: 'probe', type: 'append' }]));
    expect(s3.features).toContain('s:leaders=0');
  });

  it('can drop role labels (then node identity is dropped as in the artifact)', () => {
    const c = new CausalAbstraction({ roles: false, summary: false });
    const s = c.abstract(
      win([
        { ts: 1, node: 'n1', source: 'probe', type: 'a' },
        { ts: 2, node: 'n1', source: 'probe', type: 'b' },
      ]),
    );
    expect(s.features).toEqual(['p:a > b']);
  });

  it('buckets deltas by log2', () => {
    expect([0, 1, 2, 3, 4, 7, 8, 100].map(log2Bucket)).toEqual([0, 1, 2, 2, 3, 3, 4, 7]);
  });
});
