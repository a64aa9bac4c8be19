import { Heap } from './_internals/heap.js';

/** libuv's order within one turn of the event loop: due timers, then I/O, then immediates, then closes. */
export const PHASE = { timers: 0, io: 1, immediate: 2, close: 3 } as const;
export type Phase = (typeof PHASE)[keyof typeof PHASE];

/** Who an event belongs to: a dead owner's events are dropped, a paused owner's are held. */
export interface Owner {
  readonly alive: boolean;
  readonly paused: boolean;
  hold(event: SimEvent): void;
}

/** A process as the world's network and disks see it: its host, and what to run when it ends. */
export interface HostedProcess extends Owner {
  readonly host: string;
  /** Called when the process ends (killed or exited), once. */
  readonly onEnd: (() => void)[];
}

export interface SimEvent {
  readonly timeMs: number;
  readonly phase: Phase;
  readonly seq: number;
  readonly owner: Owner | undefined;
  readonly run: () => void;
  cancelled: boolean;
}

const before = (a: SimEvent, b: SimEvent): boolean =>
  a.timeMs !== b.timeMs ? a.timeMs < b.timeMs : a.phase !== b.phase ? a.phase < b.phase : a.seq < b.seq;

/**
 * The event heap of a simulated world, in virtual time: events ordered by (time, phase, sequence),
 * so two runs that schedule the same events run them in the same order.
 */
export class Scheduler {
  private readonly heap = new Heap<SimEvent>(before);
  private seq = 0;
  private now = 0;
  /** Events run so far. */
  executed = 0;

  get nowMs(): number {
    return this.now;
  }

  at(timeMs: number, phase: Phase, owner: Owner | undefined, run: () => void): SimEvent {
    const event: SimEvent = {
      timeMs: Math.max(timeMs, this.now),
      phase,
      seq: this.seq++,
      owner,
      run,
      cancelled: false,
    };
    this.heap.push(event);
    return event;
  }

  after(delayMs: number, phase: Phase, owner: Owner | undefined, run: () => void): SimEvent {
    return this.at(this.now + delayMs, phase, owner, run);
  }

  /** The time of the next event, or undefined when nothing is scheduled. */
  peekMs(): number | undefined {
    return this.heap.peek()?.timeMs;
  }

  /**
   * Takes the next event to run (not cancelled, its owner alive and running; a paused owner's
   * events go to the owner) and moves the clock to its time; undefined when none is due by `untilMs`.
   */
  take(untilMs = Infinity): SimEvent | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (top === undefined || top.timeMs > untilMs) return undefined;
      this.heap.pop();
      if (top.cancelled || (top.owner !== undefined && !top.owner.alive)) continue;
      this.now = top.timeMs;
      if (top.owner?.paused) {
        top.owner.hold(top);
        continue;
      }
      this.executed++;
      return top;
    }
  }

  /** Moves the clock forward to `timeMs` (nothing is due before it). */
  advanceTo(timeMs: number): void {
    this.now = Math.max(this.now, timeMs);
  }
}
