import { describe, expect, it } from 'vitest';

import { Observation } from '../../src/campaign/observation.js';
import type { Event } from '../../src/core/event.js';
import type { SystemAdapter } from '../../src/systems/system.js';

const system = {} as SystemAdapter; // no log parser: Observation asks for nothing else before start()

function probe(ts: number, type: string, term: number): Event {
  return { ts, node: 'n1', source: 'probe', type, attrs: { term } };
}

describe('Observation', () => {
  it("keeps the log events the system declares as leader changes for the schedule's checks, and no other", () => {
    const redisLike = { failoverLoss: { events: ['promoted'], why: 'async' } } as unknown as SystemAdapter;
    const observation = new Observation('/nonexistent', ['n1'], redisLike);
    const log = (type: string): Event => ({ ts: 5, node: 'n2', source: 'log', type });
    observation.ingest(log('sync-started'));
    observation.ingest(log('promoted'));
    observation.ingest({ ...log('promoted'), source: 'probe' });
    expect(observation.takeScheduleEvents()).toEqual([log('promoted')]);
    expect(new Observation('/nonexistent', ['n1'], system).takeScheduleEvents()).toEqual([]);
  });

  it("keeps a declared split brain's role events too: a start as leader, a convergence", () => {
    const redisLike = {
      failoverLoss: {
        events: ['promoted', 'sentinel+switch-master'],
        why: 'async',
        splitBrain: { promoted: 'promoted', started: 'ready', converged: ['sync-finished'] },
      },
    } as unknown as SystemAdapter;
    const observation = new Observation('/nonexistent', ['n1', 'n2'], redisLike);
    const log = (node: string, type: string, attrs?: Event['attrs']): Event => ({
      ts: 5,
      node,
      source: 'log',
      type,
      ...(attrs !== undefined ? { attrs } : {}),
    });
    const kept = [
      log('n1', 'ready', { role: 'leader' }),
      log('n2', 'promoted'),
      log('n1', 'sync-finished'),
      log('n3', 'sentinel+switch-master'),
    ];
    for (const e of [...kept, log('n1', 'sync-started')]) observation.ingest(e);
    expect(observation.takeScheduleEvents()).toEqual(kept);
  });

  it('keeps events out of the timeline while it is off, but still tells listeners and keeps invariant events', () => {
    const observation = new Observation('/nonexistent', ['n1'], system);
    const heard: string[] = [];
    observation.onEvent((e) => heard.push(e.type));
    observation.ingest(probe(1, 'append-accepted', 1));
    expect(observation.timeline.stats.buffered).toBe(1);
    observation.setTimeline(false);
    for (let i = 0; i < 1000; i++) observation.ingest(probe(2 + i, 'send', 1));
    observation.ingest(probe(2000, 'become-leader', 2));
    expect(observation.timeline.stats.buffered).toBe(1); // nothing piled up
    expect(heard).toHaveLength(1002);
    expect(observation.takeScheduleEvents().map((e) => e.type)).toEqual(['append-accepted', 'become-leader']);
    observation.setTimeline(true);
    observation.ingest(probe(3000, 'commit-advance', 2));
    expect(observation.timeline.stats.buffered).toBe(2);
  });
});
