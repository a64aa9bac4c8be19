import { type Clock, NS_PER_MS } from '../core/clock.js';
import { PHASE } from './scheduler.js';
import type { World } from './world.js';

/** The wall time virtual time 0 stands for (2026-01-01 UTC): fixed, so a seed gives the same stamps. */
export const SIM_EPOCH_MS = 1_767_225_600_000;
/** An interval's least period, as Node's (a zero period would never let virtual time pass). */
const MIN_PERIOD_MS = 1;

/**
 * The harness's clock in a simulated world: its time is the world's virtual time, its sleeps and
 * timers are events on the world's heap (owned by no process, so no kill or pause touches them).
 * Nothing waits on a real timer: the harness's waits pass as fast as the world runs its events
 * (`World.settle` drives a harness promise to its end).
 */
export class WorldClock implements Clock {
  constructor(
    private readonly world: World,
    private readonly epochMs = SIM_EPOCH_MS,
  ) {}

  /** Whole ms, as `Date.now()` gives (what reads it stores integers); `monoNs` keeps the fraction. */
  nowMs(): number {
    return this.epochMs + Math.floor(this.world.nowMs);
  }

  monoNs(): number {
    return Math.round(this.world.nowMs * NS_PER_MS);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const done = (): void => {
        cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const cancel = this.timer(ms, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  timer(ms: number, run: () => void): () => void {
    // Exact, not Node's 1 ms floor: a line due now runs now, at its virtual time.
    const event = this.world.scheduler.after(ms > 0 ? ms : 0, PHASE.timers, undefined, run);
    return () => {
      event.cancelled = true;
    };
  }

  every(ms: number, run: () => void): () => void {
    const periodMs = Math.max(MIN_PERIOD_MS, ms);
    let cancel = (): void => undefined;
    let stopped = false;
    const tick = (): void => {
      if (stopped) return;
      cancel = this.timer(periodMs, tick);
      run();
    };
    cancel = this.timer(periodMs, tick);
    return () => {
      stopped = true;
      cancel();
    };
  }
}
