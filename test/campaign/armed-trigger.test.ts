import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ArmedTrigger, triggeredLines, triggerItems } from '../../src/campaign/armed-trigger.js';
import {
  type FaultItem,
  formatBugSchedule,
  readSchedule,
  type RecordedLine,
  type ScheduleHeader,
} from '../../src/campaign/schedule-file.js';
import { ScheduleRunner } from '../../src/campaign/schedule-runner.js';
import { monoNs, sleep } from '../../src/core/clock.js';
import type { Event } from '../../src/core/event.js';
import type { TriggeredAction } from '../../src/core/trigger.js';

const dir = mkdtempSync(join(tmpdir(), 'mallory-armed-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A fake event source and cluster (n1–n3, n2 leads) that records what the trigger enacts. */
function fakeRun() {
  const listeners = new Set<(e: Event) => void>();
  const enacted: {
    f: string;
    value: unknown;
    nodes?: readonly string[];
    links?: readonly (readonly string[])[];
    line?: FaultItem;
    at: number;
  }[] = [];
  const deps = {
    skip: () => undefined,
    nodes: () => ['n1', 'n2', 'n3'],
    running: () => ['n1', 'n2', 'n3'],
    leader: () => Promise.resolve('n2'),
    onEvent: (l: (e: Event) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    signal: new AbortController().signal,
  };
  const emit = (node: string, type: string): void => {
    for (const l of [...listeners]) l({ ts: monoNs(), node, source: 'probe', type });
  };
  return { deps, enacted, emit, listeners };
}

const KILL_VOTER: TriggeredAction = { on: 'vote-granted', f: 'kill', target: 'event', delayMs: 0 };

describe('ArmedTrigger', () => {
  it("enacts its fault on the event's node as the event arrives, once, within the step", async () => {
    const run = fakeRun();
    const start = Date.now();
    const trigger = new ArmedTrigger(KILL_VOTER, 0, 150, {
      ...run.deps,
      enact: (fault, recorded, _atMs, line) => {
        run.enacted.push({ ...fault, ...recorded, line, at: Date.now() - start });
        return Promise.resolve();
      },
    });
    const done = trigger.run(start);
    await sleep(20);
    run.emit('n1', 'append-accepted');
    expect(run.enacted).toEqual([]);
    const emittedAt = Date.now() - start;
    run.emit('n3', 'vote-granted');
    run.emit('n1', 'vote-granted'); // the first event only
    await sleep(5);
    expect(run.enacted).toHaveLength(1);
    expect(run.enacted[0]).toMatchObject({ f: 'kill', nodes: ['n3'] });
    expect(run.enacted[0].at - emittedAt).toBeLessThan(5);
    expect(run.enacted[0].line).toMatchObject({ on: { type: 'vote-granted' }, nodes: ['$E'] });
    expect(await done).toBe(true);
    expect(Date.now() - start).toBeGreaterThanOrEqual(145);
  });

  it('does not fire once the step has ended, and drops a delayed fault still waiting then', async () => {
    const run = fakeRun();
    const start = Date.now();
    const enact = (): Promise<void> => {
      run.enacted.push({ f: 'x', value: null, at: Date.now() - start });
      return Promise.resolve();
    };
    const late = new ArmedTrigger({ ...KILL_VOTER, delayMs: 50 }, 0, 60, { ...run.deps, enact });
    const done = late.run(start);
    await sleep(30);
    run.emit('n1', 'vote-granted'); // due at ~80 ms, after the step's end at 60 ms
    expect(await done).toBe(false);
    expect(run.listeners.size).toBe(0);
    run.emit('n1', 'vote-granted');
    await sleep(60);
    expect(run.enacted).toEqual([]);
  });

  it('names its targets relative to the event: others, an isolating partition, the leader', async () => {
    for (const [action, expected] of [
      [
        { ...KILL_VOTER, target: 'others' },
        { f: 'kill', nodes: ['n1', 'n2'] },
      ],
      [
        { ...KILL_VOTER, f: 'start-partition', target: 'isolate' },
        {
          f: 'start-partition',
          links: [
            ['n3', 'n1'],
            ['n3', 'n2'],
            ['n1', 'n3'],
            ['n2', 'n3'],
          ],
        },
      ],
      [
        { ...KILL_VOTER, f: 'pause', target: 'leader' },
        { f: 'pause', value: 'leader' },
      ],
    ] as const) {
      const run = fakeRun();
      const start = Date.now();
      const trigger = new ArmedTrigger(action, 0, 40, {
        ...run.deps,
        enact: (fault, recorded) => {
          run.enacted.push({ ...fault, ...recorded, at: 0 });
          return Promise.resolve();
        },
      });
      const done = trigger.run(start);
      await sleep(5);
      run.emit('n3', 'vote-granted');
      await done;
      expect(run.enacted).toEqual([expect.objectContaining(expected)]);
    }
  });

  it("is written to a bug's schedule with its trigger and replays it: on the event, at the event's node", async () => {
    const items = triggerItems({ ...KILL_VOTER, delayMs: 5 }, 2500, 2000);
    const fault = items.find((i): i is FaultItem => !('let' in i))!;
    const recorded: RecordedLine[] = [
      { atMs: 100, f: 'kill', value: 'one', nodes: ['n1'] },
      ...triggeredLines(fault),
      fault,
    ];
    const header: ScheduleHeader = {
      system: 'kvraft',
      nodes: 3,
      seed: 1,
      bugs: [],
      workload: 'register',
      rate: 100,
      steps: 12,
      stepMs: 2500,
      network: 'auto',
      schedule: 0,
      finding: { kind: 'invariant', name: 'election-safety' },
    };
    const file = join(dir, 'schedule.jsonl');
    writeFileSync(file, formatBugSchedule(header, recorded));
    const read = readSchedule(file);
    expect(read).toEqual([
      { atMs: 100, f: 'kill', value: 'one', nodes: ['n1'] },
      { atMs: 2500, on: { type: 'vote-granted', withinMs: 2000 }, let: { E: 'node' } },
      {
        atMs: 2500,
        on: { type: 'vote-granted', withinMs: 2000 },
        delayMs: 5,
        f: 'kill',
        value: null,
        nodes: ['$E'],
      },
    ]);
    const shifted = read.slice(1).map((i) => ({ ...i, atMs: 10 }));
    const run = fakeRun();
    const replay = new ScheduleRunner(shifted, {
      ...run.deps,
      enact: (f, rec, atMs) => {
        run.enacted.push({ ...f, ...rec, at: atMs });
        return Promise.resolve();
      },
    });
    const start = Date.now();
    const done = replay.run(start, 80);
    await sleep(30);
    run.emit('n2', 'vote-granted');
    await done;
    expect(run.enacted).toEqual([expect.objectContaining({ f: 'kill', nodes: ['n2'] })]);
  });
});
