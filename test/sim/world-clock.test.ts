import { afterEach, describe, expect, it, vi } from 'vitest';

import type { ScheduleItem } from '../../src/campaign/schedule-file.js';
import { ScheduleRunner } from '../../src/campaign/schedule-runner.js';
import type { Event } from '../../src/core/event.js';
import { Timeline } from '../../src/timeline/timeline.js';
import { SIM_EPOCH_MS, WorldClock } from '../../src/sim/world-clock.js';
import { World } from '../../src/sim/world.js';

const SCHEDULE_MS = 60_000;

afterEach(() => {
  vi.restoreAllMocks();
});

/** Fails the test if anything under it asks Node for a real timer. */
function forbidRealTimers(): { readonly calls: () => number } {
  const timeout = vi.spyOn(globalThis, 'setTimeout');
  const interval = vi.spyOn(globalThis, 'setInterval');
  return { calls: () => timeout.mock.calls.length + interval.mock.calls.length };
}

describe('WorldClock', () => {
  it('reads virtual time and runs sleeps, timers and intervals as world events', async () => {
    const world = new World({ seed: 1 });
    const clock = new WorldClock(world);
    const real = forbidRealTimers();
    const seen: string[] = [];
    const stopEvery = clock.every(1000, () => seen.push(`tick ${world.nowMs}`));
    const cancelled = clock.timer(1500, () => seen.push('cancelled timer ran'));
    clock.timer(2500, () => seen.push(`timer ${world.nowMs}`));
    cancelled();
    await world.settle(clock.sleep(3000));
    stopEvery();
    await world.run(5000);
    // The sleep was due at 3 s before the interval's third tick was armed: it ran first, and the
    // interval was stopped before its tick.
    expect(seen).toEqual(['tick 1000', 'tick 2000', 'timer 2500']);
    expect(clock.nowMs()).toBe(SIM_EPOCH_MS + 8000);
    expect(clock.monoNs()).toBe(8000 * 1e6);
    expect(real.calls()).toBe(0);
  });

  it('ends a sleep when its signal aborts, at the virtual time of the abort', async () => {
    const world = new World({ seed: 1 });
    const clock = new WorldClock(world);
    const abort = new AbortController();
    clock.timer(700, () => {
      abort.abort();
    });
    await world.settle(clock.sleep(60_000, abort.signal));
    expect(world.nowMs).toBe(700);
    // The aborted sleep's event was cancelled: nothing is left to run.
    expect(world.step()).toBe(false);
    expect(world.nowMs).toBe(700);
  });

  it("drives a 60 s schedule's timed and triggered lines at their virtual times, with no real timer", async () => {
    const world = new World({ seed: 7 });
    const clock = new WorldClock(world);
    const listeners = new Set<(e: Event) => void>();
    const enacted: { f: string; atMs: number; at: number }[] = [];
    const items: ScheduleItem[] = [
      { atMs: 0, f: 'start-partition', value: 'halves' },
      { atMs: 12_500, f: 'stop-partition', value: null },
      { atMs: 20_000, on: { type: 'become-leader' }, delayMs: 750, f: 'kill', value: null, nodes: ['n1'] },
      { atMs: 45_000, f: 'start', value: null, nodes: ['n1'] },
      { atMs: 59_999, f: 'pause', value: null, nodes: ['n2'] },
    ];
    const scheduleStart = clock.nowMs();
    const runner = new ScheduleRunner(items, {
      enact: (fault, _recorded, atMs) => {
        enacted.push({ f: fault.f, atMs, at: world.nowMs });
        return Promise.resolve();
      },
      skip: (item, reason) => {
        throw new Error(`skipped ${JSON.stringify(item)}: ${reason}`);
      },
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
    // The system elects a leader at 31.2 s of virtual time: the trigger armed at 20 s fires then.
    world.scheduler.at(31_200, 0, undefined, () => {
      for (const l of listeners)
        l({ ts: clock.monoNs(), node: 'n3', source: 'probe', type: 'become-leader' });
    });
    const real = forbidRealTimers();
    const wallStart = performance.now();
    await world.settle(runner.run(scheduleStart, SCHEDULE_MS), SCHEDULE_MS * 2);
    const wallMs = performance.now() - wallStart;
    expect(enacted).toEqual([
      { f: 'start-partition', atMs: 0, at: 0 },
      { f: 'stop-partition', atMs: 12_500, at: 12_500 },
      { f: 'kill', atMs: 31_950, at: 31_950 },
      { f: 'start', atMs: 45_000, at: 45_000 },
      { f: 'pause', atMs: 59_999, at: 59_999 },
    ]);
    // The runner waited to the schedule's end, in virtual time only.
    expect(world.nowMs).toBe(SCHEDULE_MS);
    expect(real.calls()).toBe(0);
    // Said, not asserted on (a test does not time itself): a real wait would have taken 60 s.
    console.log(`a 60 s schedule ran in ${wallMs.toFixed(0)} ms of wall time`);
  });

  it("closes a timeline's windows after their grace in virtual time", async () => {
    const world = new World({ seed: 3 });
    const clock = new WorldClock(world);
    const timeline = new Timeline({ clock, graceMs: 150 });
    timeline.ingest({ ts: 1e9, node: 'n1', source: 'probe', type: 'a' });
    world.scheduler.at(2_100, 0, undefined, () => {
      timeline.ingest({ ts: 1.9e9, node: 'n2', source: 'probe', type: 'late-but-in-grace' });
    });
    await world.run(2_000);
    const real = forbidRealTimers();
    const window = await world.settle(timeline.close(0, 0, 2_000 * 1e6));
    expect(window.events.map((e) => e.type)).toEqual(['a', 'late-but-in-grace']);
    expect(world.nowMs).toBe(2_150);
    expect(real.calls()).toBe(0);
  });
});
