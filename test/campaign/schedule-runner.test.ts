import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { readSchedule } from '../../src/campaign/schedule-file.js';
import { ScheduleRunner } from '../../src/campaign/schedule-runner.js';
import { HarnessError } from '../../src/core/errors.js';
import type { Event } from '../../src/core/event.js';
import { WorldClock } from '../../src/sim/world-clock.js';
import { World } from '../../src/sim/world.js';

const dir = mkdtempSync(join(tmpdir(), 'mallory-runner-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** How far a test's world may run in virtual time before it fails (none comes near). */
const VIRTUAL_LIMIT_MS = 600_000;

function schedule(lines: object[]): ReturnType<typeof readSchedule> {
  const file = join(dir, `s${Math.random()}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return readSchedule(file);
}

/**
 * A runner on a three-node cluster whose leader is n2; events are pushed by the test. Its time is a
 * simulated world's virtual time: a loaded machine cannot make a line late, so the timing asserted
 * is the runner's own. `at` runs a step of the test at a virtual time; `drive` runs the world until
 * the promise settles.
 */
function harness(
  items: ReturnType<typeof readSchedule>,
  failAt?: { f: string; error: Error },
  signal: AbortSignal = new AbortController().signal,
) {
  const enacted: {
    f: string;
    nodes?: readonly string[];
    links?: readonly (readonly string[])[];
    atMs: number;
  }[] = [];
  const skipped: string[] = [];
  const listeners = new Set<(e: Event) => void>();
  const world = new World({ seed: 1 });
  const clock = new WorldClock(world);
  const runner = new ScheduleRunner(items, {
    enact: (fault, recorded, atMs) => {
      enacted.push({ f: fault.f, ...recorded, atMs });
      return fault.f === failAt?.f ? Promise.reject(failAt.error) : Promise.resolve();
    },
    skip: (_item, reason) => skipped.push(reason),
    nodes: () => ['n1', 'n2', 'n3'],
    running: () => ['n1', 'n2', 'n3'],
    leader: () => Promise.resolve('n2'),
    onEvent: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    signal,
    clock,
  });
  const emit = (node: string, type: string, attrs?: Record<string, string | number>): void => {
    for (const l of listeners) {
      l({ ts: clock.monoNs(), node, source: 'probe', type, ...(attrs ? { attrs } : {}) });
    }
  };
  const at = (ms: number, step: () => void): void => {
    world.scheduler.at(ms, 0, undefined, step);
  };
  const drive = <T>(promise: Promise<T>): Promise<T> => world.settle(promise, VIRTUAL_LIMIT_MS);
  return { runner, enacted, skipped, emit, world, clock, at, drive };
}

describe('ScheduleRunner', () => {
  it('binds roles and resolves $names, * and ! in nodes and groups', async () => {
    const h = harness(
      schedule([
        { atMs: 0, let: { L: 'leader', F: 'follower', G: 'follower' } },
        { atMs: 10, f: 'kill', nodes: ['*', '!$L'] },
        { atMs: 20, f: 'start-partition', groups: [['$L'], ['*']] },
        { atMs: 30, f: 'pause', nodes: ['$G'] },
      ]),
    );
    await h.drive(h.runner.run(h.clock.nowMs(), 400));
    expect(h.enacted.map((e) => [e.f, e.nodes ?? e.links])).toEqual([
      ['kill', ['n1', 'n3']],
      [
        'start-partition',
        [
          ['n2', 'n1'],
          ['n2', 'n3'],
          ['n1', 'n2'],
          ['n3', 'n2'],
        ],
      ],
      ['pause', ['n3']],
    ]);
    expect(h.skipped).toEqual([]);
  });

  it('runs triggered lines on the first matching event after they are armed, with their delay', async () => {
    const h = harness(
      schedule([
        { atMs: 20, on: { type: 'become-leader' }, let: { C: 'node', T: 'attrs.term' } },
        { atMs: 20, on: { type: 'become-leader' }, f: 'kill', nodes: ['*', '!$C'] },
        { atMs: 20, on: { type: 'become-leader' }, delayMs: 40, f: 'start', nodes: ['$C'] },
      ]),
    );
    const start = h.clock.nowMs();
    const done = h.runner.run(start, 1000);
    h.emit('n1', 'become-leader', { term: 2 }); // before the line is armed: ignored
    let killedAtEvent: unknown[] = [];
    h.at(40, () => {
      h.emit('n3', 'vote-granted');
      expect(h.enacted).toEqual([]);
      h.emit('n3', 'become-leader', { term: 3 });
      h.emit('n1', 'become-leader', { term: 4 }); // the group has fired: ignored
    });
    // The kill, queued at the event, comes first, at the event's moment; the start waits its 40 ms.
    h.at(41, () => {
      killedAtEvent = h.enacted.map((e) => [e.f, e.nodes, e.atMs]);
    });
    await h.drive(done);
    expect(killedAtEvent).toEqual([['kill', ['n1', 'n2'], 40]]);
    expect(h.enacted.map((e) => [e.f, e.nodes, e.atMs])).toEqual([
      ['kill', ['n1', 'n2'], 40],
      ['start', ['n3'], 80],
    ]);
  });

  it('matches node and attributes, and a trigger past its window never fires', async () => {
    const stop = new AbortController();
    const h = harness(
      schedule([
        { atMs: 0, let: { L: 'leader' } },
        // Armed in file order (all at 5 ms): once the kill has fired, the other two are armed too.
        { atMs: 5, on: { type: 'step-down', withinMs: 10 }, f: 'pause', nodes: ['n1'] },
        { atMs: 5, on: { type: 'marker' }, f: 'start', nodes: ['n3'] },
        {
          atMs: 5,
          on: { type: 'snapshot-taken', node: '$L', attrs: { index: 64 } },
          f: 'kill',
          nodes: ['$L'],
        },
      ]),
      undefined,
      stop.signal,
    );
    const start = h.clock.nowMs();
    const done = h.runner.run(start, 60_000);
    // All three armed at 5 ms: the snapshot on the leader fires the kill.
    h.at(6, () => {
      h.emit('n1', 'snapshot-taken', { index: 64 });
      h.emit('n2', 'snapshot-taken', { index: 63 });
      h.emit('n2', 'snapshot-taken', { index: 64 });
    });
    let killedFirst: unknown[] = [];
    // Past the step-down line's window (5 + 10 ms from the start) by the runner's clock.
    h.at(5 + 10 + 1, () => {
      killedFirst = h.enacted.map((e) => [e.f, e.nodes]);
      h.emit('n2', 'step-down');
      // Lines run one at a time in the order they became due: once the marker's line has run, a
      // pause queued by the step-down would have run before it.
      h.emit('n2', 'marker');
    });
    h.at(20, () => {
      stop.abort();
    });
    await h.drive(done);
    expect(killedFirst).toEqual([['kill', ['n2']]]);
    expect(h.enacted.map((e) => [e.f, e.nodes])).toEqual([
      ['kill', ['n2']],
      ['start', ['n3']],
    ]);
  });

  it("aims a recorded line at the same roles: the recorded leader and today's swap names", async () => {
    const h = harness(
      schedule([
        {
          atMs: 0,
          f: 'start-partition',
          value: 'isolate',
          nodes: ['n1', 'n2', 'n3'],
          links: [
            ['n1', 'n2'],
            ['n1', 'n3'],
            ['n2', 'n1'],
            ['n3', 'n1'],
          ],
          leader: 'n1',
        },
        { atMs: 5, f: 'kill', nodes: ['n3'], leader: 'n2' },
        { atMs: 10, f: 'pause', nodes: ['n3'], leader: 'n3' },
      ]),
    );
    await h.drive(h.runner.run(h.clock.nowMs(), 300));
    // The leader is n2 now: the isolated leader n1 becomes n2; a line recorded under n2 is as it
    // was; one recorded under n3 aims at n2 (the leader) instead of n3.
    expect(h.enacted.map((e) => [e.f, e.nodes, e.links])).toEqual([
      [
        'start-partition',
        ['n2', 'n1', 'n3'],
        [
          ['n2', 'n1'],
          ['n2', 'n3'],
          ['n1', 'n2'],
          ['n3', 'n2'],
        ],
      ],
      ['kill', ['n3'], undefined],
      ['pause', ['n2'], undefined],
    ]);
  });

  it('skips, and says why, a line whose name is not bound', async () => {
    const h = harness(schedule([{ atMs: 0, f: 'kill', nodes: ['$X'] }]));
    await h.drive(h.runner.run(h.clock.nowMs(), 200));
    expect(h.enacted).toEqual([]);
    expect(h.skipped).toEqual(['$X is not bound']);
  });
});

/** The schedule's end in the "past the end" cases: the slow fault takes until after it. */
const END_MS = 40;

describe('ScheduleRunner and the end of the run', () => {
  it.each([
    {
      title: 'skips, and says why, what a slow fault carried past the end: the budget bounds the faults',
      lines: [
        { atMs: 0, f: 'member-remove', nodes: ['n1'] },
        { atMs: 10, f: 'kill', nodes: ['n2'] },
        { atMs: 20, on: { type: 'elected' }, f: 'pause', nodes: ['n3'] },
      ],
      budgetMs: undefined,
      electedDuringSlowFault: false,
      enacted: ['member-remove'],
      skipped: [
        'kill: due at 10 ms, reached past the end of the run (40 ms)',
        'pause: due at 20 ms, reached past the end of the run (40 ms)',
      ],
    },
    {
      title: 'enacts what a slow fault delayed past the schedule’s end while the budget lasts',
      lines: [
        { atMs: 0, f: 'member-remove', nodes: ['n1'] },
        { atMs: 10, f: 'kill', nodes: ['n2'] },
      ],
      budgetMs: 60_000,
      electedDuringSlowFault: false,
      enacted: ['member-remove', 'kill'],
      skipped: [],
    },
    {
      title:
        'does not enact a triggered line whose event comes while a slow fault holds the queue past the end',
      lines: [
        { atMs: 0, on: { type: 'elected' }, f: 'pause', nodes: ['n3'] },
        { atMs: 0, f: 'member-remove', nodes: ['n1'] },
      ],
      budgetMs: undefined,
      electedDuringSlowFault: true,
      enacted: ['member-remove'],
      skipped: ['pause: reached past the end of the run (40 ms)'],
    },
  ])(
    '$title',
    async ({
      lines,
      budgetMs,
      electedDuringSlowFault,
      enacted: expectedEnacted,
      skipped: expectedSkipped,
    }) => {
      const enacted: string[] = [];
      const skipped: string[] = [];
      const listeners = new Set<(e: Event) => void>();
      // Virtual time: the slow fault ends just past the end however loaded the machine is.
      const world = new World({ seed: 1 });
      const clock = new WorldClock(world);
      const runner = new ScheduleRunner(schedule(lines), {
        // The removal takes until past the schedule's end (a membership change that took its time).
        enact: async (fault) => {
          enacted.push(fault.f);
          if (fault.f === 'member-remove') {
            if (electedDuringSlowFault) {
              for (const l of listeners) {
                l({ ts: clock.monoNs(), node: 'n2', source: 'probe', type: 'elected' });
              }
            }
            await clock.sleep(END_MS + 2);
          }
        },
        skip: (item, reason) => skipped.push(`${'f' in item ? item.f : 'let'}: ${reason}`),
        nodes: () => ['n1', 'n2', 'n3'],
        running: () => ['n1', 'n2', 'n3'],
        leader: () => Promise.resolve('n2'),
        onEvent: (l) => {
          listeners.add(l);
          return () => listeners.delete(l);
        },
        signal: new AbortController().signal,
        clock,
      });
      await world.settle(runner.run(clock.nowMs(), END_MS, budgetMs), VIRTUAL_LIMIT_MS);
      expect(enacted).toEqual(expectedEnacted);
      expect(skipped).toEqual(expectedSkipped);
    },
  );
});

describe('ScheduleRunner when Mallory itself fails', () => {
  it('stops the schedule at the first error that is not a line of its own and rethrows it', async () => {
    const error = new HarnessError('cannot record process 1 in the registry');
    const h = harness(
      schedule([
        { atMs: 0, f: 'kill', nodes: ['n1'] },
        { atMs: 5, f: 'pause', nodes: ['n2'] },
        { atMs: 10, on: { type: 'elected' }, f: 'pause', nodes: ['n3'] },
        { atMs: 2000, f: 'start-partition', value: 'halves' },
      ]),
      { f: 'kill', error },
    );
    const started = h.clock.nowMs();
    const done = h.runner.run(started, 5000).then(
      () => undefined,
      (e: unknown) => e,
    );
    h.at(30, () => {
      h.emit('n2', 'elected');
    });
    expect(await h.drive(done)).toBe(error);
    // It stopped at once: the line at 2 s never ran and the run did not wait for its end at 5 s.
    expect(h.clock.nowMs() - started).toBeLessThan(2000);
    expect(h.enacted.map((e) => e.f)).toEqual(['kill']);
  });
});

describe('readSchedule (triggers and names)', () => {
  it('refuses groups on a fault other than start-partition, unknown roles and unknown fields', () => {
    expect(() => schedule([{ atMs: 0, f: 'kill', groups: [['n1'], ['n2']] }])).toThrow(
      /only start-partition/,
    );
    expect(() => schedule([{ atMs: 0, let: { L: 'boss' } }])).toThrow(/leader, follower, node or attrs/);
    expect(() => schedule([{ atMs: 0, f: 'kill', when: 3 }])).toThrow(/Unrecognized key/);
  });
});
