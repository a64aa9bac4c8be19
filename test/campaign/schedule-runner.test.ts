import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it, vi } from 'vitest';

import { readSchedule } from '../../src/campaign/schedule-file.js';
import { ScheduleRunner } from '../../src/campaign/schedule-runner.js';
import { monoNs, sleep } from '../../src/core/clock.js';
import { HarnessError } from '../../src/core/errors.js';
import type { Event } from '../../src/core/event.js';

const dir = mkdtempSync(join(tmpdir(), 'mallory-runner-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function schedule(lines: object[]): ReturnType<typeof readSchedule> {
  const file = join(dir, `s${Math.random()}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return readSchedule(file);
}

/** A runner on a three-node cluster whose leader is n2; events are pushed by the test. */
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
  });
  const emit = (node: string, type: string, attrs?: Record<string, string | number>): void => {
    for (const l of listeners) l({ ts: monoNs(), node, source: 'probe', type, ...(attrs ? { attrs } : {}) });
  };
  return { runner, enacted, skipped, emit };
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
    await h.runner.run(Date.now(), 400);
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
    const start = Date.now();
    // The run lasts well past the trigger's 40 ms delay even on a loaded machine.
    const done = h.runner.run(start, 1000);
    h.emit('n1', 'become-leader', { term: 2 }); // before the line is armed: ignored
    await sleep(40);
    h.emit('n3', 'vote-granted');
    expect(h.enacted).toEqual([]);
    const firedAtMs = Date.now() - start;
    h.emit('n3', 'become-leader', { term: 3 });
    h.emit('n1', 'become-leader', { term: 4 }); // the group has fired: ignored
    // The kill, queued at the event, comes first; the start waits its 40 ms.
    await vi.waitFor(
      () => {
        expect(h.enacted.length).toBeGreaterThan(0);
      },
      { interval: 1, timeout: 5000 },
    );
    expect(h.enacted.map((e) => [e.f, e.nodes])[0]).toEqual(['kill', ['n1', 'n2']]);
    await done;
    expect(h.enacted.map((e) => [e.f, e.nodes])).toEqual([
      ['kill', ['n1', 'n2']],
      ['start', ['n3']],
    ]);
    // 40 ms after the event (a timer may fire up to a millisecond early by Date.now()); the kill,
    // queued at the event, may itself run late on a loaded machine, so the two are not compared.
    expect(h.enacted[1].atMs - firedAtMs).toBeGreaterThanOrEqual(39);
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
    const start = Date.now();
    // The run outlasts the test's conditions however loaded the machine; the test ends it.
    const done = h.runner.run(start, 60_000);
    await vi.waitFor(
      () => {
        h.emit('n1', 'snapshot-taken', { index: 64 });
        h.emit('n2', 'snapshot-taken', { index: 63 });
        h.emit('n2', 'snapshot-taken', { index: 64 });
        expect(h.enacted.length).toBeGreaterThan(0);
      },
      { interval: 1, timeout: 10_000 },
    );
    // Past the step-down line's window (5 + 10 ms from the start) by the runner's own clock.
    await vi.waitFor(
      () => {
        expect(Date.now()).toBeGreaterThan(start + 5 + 10 + 1);
      },
      { interval: 1, timeout: 10_000 },
    );
    h.emit('n2', 'step-down');
    // Lines run one at a time in the order they became due: once the marker's line has run, a pause
    // queued by the step-down would have run before it.
    h.emit('n2', 'marker');
    await vi.waitFor(
      () => {
        expect(h.enacted.map((e) => e.f)).toContain('start');
      },
      { interval: 1, timeout: 10_000 },
    );
    stop.abort();
    await done;
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
    await h.runner.run(Date.now(), 300);
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
    await h.runner.run(Date.now(), 200);
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
      let start = 0;
      const runner = new ScheduleRunner(schedule(lines), {
        // The removal takes until past the schedule's end (a membership change that took its time).
        enact: async (fault) => {
          enacted.push(fault.f);
          if (fault.f === 'member-remove') {
            if (electedDuringSlowFault) {
              for (const l of listeners) l({ ts: monoNs(), node: 'n2', source: 'probe', type: 'elected' });
            }
            await vi.waitFor(
              () => {
                expect(Date.now()).toBeGreaterThan(start + END_MS + 1);
              },
              { interval: 1, timeout: 10_000 },
            );
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
      });
      start = Date.now();
      await runner.run(start, END_MS, budgetMs);
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
    const started = Date.now();
    const done = h.runner.run(started, 5000).then(
      () => undefined,
      (e: unknown) => e,
    );
    await sleep(30);
    h.emit('n2', 'elected');
    expect(await done).toBe(error);
    // It stopped at once: the line at 2 s never ran and the run did not wait for its end at 5 s.
    expect(Date.now() - started).toBeLessThan(1500);
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
