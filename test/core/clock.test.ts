import { describe, expect, it } from 'vitest';

import { parseDurationMs, realClock, within } from '../../src/core/clock.js';

describe('parseDurationMs', () => {
  it('reads units', () => {
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('30s')).toBe(30_000);
    expect(parseDurationMs('10m')).toBe(600_000);
    expect(parseDurationMs('1h')).toBe(3_600_000);
    expect(parseDurationMs('5')).toBe(5000);
  });
  it('rejects nonsense with a message saying what to write', () => {
    expect(() => parseDurationMs('ten')).toThrow(/use e.g./);
  });
});

describe('realClock', () => {
  it("runs Node's timers: a cancelled timer never runs, an interval runs until stopped", async () => {
    const seen: string[] = [];
    const cancel = realClock.timer(1, () => seen.push('cancelled'));
    cancel();
    let ticks = 0;
    const ticked = new Promise<void>((resolve) => {
      const stop = realClock.every(1, () => {
        ticks++;
        if (ticks === 3) {
          stop();
          resolve();
        }
      });
    });
    await ticked;
    await realClock.sleep(5);
    expect(ticks).toBe(3);
    expect(seen).toEqual([]);
  });

  it('ends a sleep when its signal aborts', async () => {
    const abort = new AbortController();
    const slept = realClock.sleep(60_000, abort.signal).then(() => 'slept');
    abort.abort();
    const first = await Promise.race([slept, realClock.sleep(1000).then(() => 'a second passed')]);
    expect(first).toBe('slept');
  });
});

describe('within', () => {
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it('gives the promise its value when it comes first, and leaves no timer behind', async () => {
    const before = timers();
    expect(await within(Promise.resolve('done'), 60_000, 'late')).toBe('done');
    expect(timers()).toBe(before);
  });

  it('gives the fallback once the time has passed, and leaves no timer behind', async () => {
    const before = timers();
    expect(await within(new Promise<string>(() => undefined), 5, 'late')).toBe('late');
    expect(timers()).toBe(before);
  });

  it('passes on the promise’s rejection, and leaves no timer behind', async () => {
    const before = timers();
    await expect(within(Promise.reject(new Error('no')), 60_000, 'late')).rejects.toThrow('no');
    expect(timers()).toBe(before);
  });
});
