import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { crossPairs, intraPairs } from '../../src/abstraction/pairs.js';
import type { Event } from '../../src/core/event.js';

function log(ts: number, node: string, type: string): Event {
  return { ts, node, source: 'log', type };
}

describe('intraPairs', () => {
  it('forms every ordered pair on a node, as the artifact does', () => {
    const events = [log(1, 'n1', 'a'), log(2, 'n2', 'x'), log(3, 'n1', 'b'), log(4, 'n1', 'a')];
    expect([...intraPairs(events, new Set())].sort()).toEqual(['a > a', 'a > b', 'b > a']);
  });

  it('ignores messages, client and nemesis events', () => {
    const events: Event[] = [
      log(1, 'n1', 'a'),
      { ts: 2, node: 'n1', source: 'probe', type: 'send', attrs: { msg: 'm' } },
      { ts: 3, node: 'n1', source: 'client', type: 'invoke' },
      { ts: 4, node: 'n1', source: 'net', type: 'recv', attrs: { msg: 'k' } },
      log(5, 'n1', 'b'),
    ];
    expect([...intraPairs(events, new Set())]).toEqual(['a > b']);
  });

  it('equals the brute-force definition', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ node: fc.constantFrom('n1', 'n2'), type: fc.constantFrom('a', 'b', 'c', 'd') }),
          {
            maxLength: 40,
          },
        ),
        (raw) => {
          const events = raw.map((r, i) => log(i, r.node, r.type));
          const expected = new Set<string>();
          for (let i = 0; i < events.length; i++) {
            for (let j = i + 1; j < events.length; j++) {
              if (events[i].node === events[j].node) expected.add(`${events[i].type} > ${events[j].type}`);
            }
          }
          expect(intraPairs(events, new Set())).toEqual(expected);
        },
      ),
    );
  });
});

describe('crossPairs', () => {
  it('pairs the last event before a send with the first after its receive', () => {
    const send: Event = { ts: 3, node: 'n1', source: 'net', type: 'send', attrs: { msg: 'm', peer: 'n2' } };
    const typed: Event = { ...send, attrs: { msg: 'm', peer: 'n2', kind: 'append' } };
    const recv: Event = { ts: 5, node: 'n2', source: 'net', type: 'recv', attrs: { msg: 'm', peer: 'n1' } };
    const events = [
      log(1, 'n1', 'a'),
      log(2, 'n1', 'b'),
      send,
      log(4, 'n2', 'early'),
      recv,
      log(6, 'n2', 'c'),
      log(7, 'n2', 'd'),
    ];
    const window = { index: 0, startTs: 0, endTs: 10, events, edges: [{ send, recv }] };
    expect([...crossPairs(window, new Set())]).toEqual(['b > c']);
    const bare = { ...window, events: [send, recv], edges: [{ send, recv }] };
    expect([...crossPairs(bare, new Set())]).toEqual(['^ > $']);
    const kinded = { ...window, edges: [{ send: typed, recv }] };
    expect([...crossPairs(kinded, new Set())]).toEqual(['b >append> c']);
  });
});

describe('pairs across sources', () => {
  it('does not pair a node’s probe events with its log lines (their stamps are not comparable)', () => {
    const events: Event[] = [
      { ts: 1, node: 'n1', source: 'probe', type: 'p1' },
      { ts: 2, node: 'n1', source: 'log', type: 'L1' },
      { ts: 3, node: 'n1', source: 'probe', type: 'p2' },
    ];
    expect([...intraPairs(events, new Set())]).toEqual(['p1 > p2']);
  });

  it('uses probe events only around probe edges', () => {
    const send: Event = { ts: 3, node: 'n1', source: 'probe', type: 'send', attrs: { msg: 'm' } };
    const recv: Event = { ts: 5, node: 'n2', source: 'probe', type: 'recv', attrs: { msg: 'm' } };
    const events: Event[] = [
      { ts: 1, node: 'n1', source: 'probe', type: 'a' },
      { ts: 2, node: 'n1', source: 'log', type: 'L1' },
      send,
      recv,
      { ts: 6, node: 'n2', source: 'log', type: 'L2' },
      { ts: 7, node: 'n2', source: 'probe', type: 'b' },
    ];
    const window = { index: 0, startTs: 0, endTs: 10, events, edges: [{ send, recv }] };
    expect([...crossPairs(window, new Set())]).toEqual(['a > b']);
  });
});
