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
import type { Event } from '../../src/core/event.js';
import type { TriggeredAction } from '../../src/core/trigger.js';
import { WorldClock } from '../../src/sim/world-clock.js';
import { World } from '../../src/sim/world.js';

const dir = mkdtempSync(join(tmpdir(), 'mallory-armed-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** How far a test's world may run in virtual time before it fails (none comes near). */
const VIRTUAL_LIMIT_MS = 600_000;

/**
 * A fake event source and cluster (n1–n3, n2 leads) that records what the trigger enacts. Its time
 * is a simulated world's virtual time, so a loaded machine cannot make the trigger late: `at` runs a
 * step of the test at a virtual time, `drive` runs the world until the promise settles.
 */
function fakeRun() {
  const world = new World({ seed: 1 });
  const clock = new WorldClock(world);
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
    clock,
  };
  const emit = (node: string, type: string): void => {
    for (const l of [...listeners]) l({ ts: clock.monoNs(), node, source: 'probe', type });
  };
  const at = (ms: number, step: () => void): void => {
    world.scheduler.at(ms, 0, undefined, step);
  };
  const drive = <T>(promise: Promise<T>): Promise<T> => world.settle(promise, VIRTUAL_LIMIT_MS);
  return { deps, enacted, emit, listeners, world, clock, at, drive };
}

const KILL_VOTER: TriggeredAction = { on: 'vote-granted', f: 'kill', target: 'event', delayMs: 0 };

describe('ArmedTrigger', () => {
  it("enacts its fault on the event's node as the event arrives, once, within the step", async () => {
    const run = fakeRun();
    const start = run.clock.nowMs();
    const trigger = new ArmedTrigger(KILL_VOTER, 0, 150, {
      ...run.deps,
      enact: (fault, recorded, _atMs, line) => {
        run.enacted.push({ ...fault, ...recorded, line, at: run.clock.nowMs() - start });
        return Promise.resolve();
      },
    });
    const done = trigger.run(start);
    let beforeVote: unknown[] = ['not looked at'];
    run.at(20, () => {
      run.emit('n1', 'append-accepted');
      beforeVote = [...run.enacted];
      run.emit('n3', 'vote-granted');
      run.emit('n1', 'vote-granted'); // the first event only
    });
    const fired = await run.drive(done);
    expect(beforeVote).toEqual([]);
    expect(run.enacted).toHaveLength(1);
    expect(run.enacted[0]).toMatchObject({ f: 'kill', nodes: ['n3'] });
    // As the event arrives: at its very moment of the run's clock.
    expect(run.enacted[0].at).toBe(20);
    expect(run.enacted[0].line).toMatchObject({ on: { type: 'vote-granted' }, nodes: ['$E'] });
    expect(fired).toBe(true);
    // It waited for the step's end.
    expect(run.clock.nowMs() - start).toBe(150);
  });

  it('does not fire once the step has ended, and drops a delayed fault still waiting then', async () => {
    const run = fakeRun();
    const start = run.clock.nowMs();
    const enact = (): Promise<void> => {
      run.enacted.push({ f: 'x', value: null, at: run.clock.nowMs() - start });
      return Promise.resolve();
    };
    const late = new ArmedTrigger({ ...KILL_VOTER, delayMs: 50 }, 0, 60, { ...run.deps, enact });
    const done = late.run(start);
    run.at(30, () => {
      run.emit('n1', 'vote-granted'); // due at ~80 ms, after the step's end at 60 ms
    });
    expect(await run.drive(done)).toBe(false);
    expect(run.clock.nowMs() - start).toBe(60);
    expect(run.listeners.size).toBe(0);
    run.emit('n1', 'vote-granted');
    // Past the moment the dropped fault was due, and more.
    await run.world.run(60);
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
      const start = run.clock.nowMs();
      const trigger = new ArmedTrigger(action, 0, 40, {
        ...run.deps,
        enact: (fault, recorded) => {
          run.enacted.push({ ...fault, ...recorded, at: 0 });
          return Promise.resolve();
        },
      });
      const done = trigger.run(start);
      run.at(5, () => {
        run.emit('n3', 'vote-granted');
      });
      await run.drive(done);
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
    const done = replay.run(run.clock.nowMs(), 80);
    run.at(30, () => {
      run.emit('n2', 'vote-granted');
    });
    await run.drive(done);
    expect(run.enacted).toEqual([expect.objectContaining({ f: 'kill', nodes: ['n2'] })]);
  });
});
