import { type Clock, NS_PER_MS, realClock } from '../core/clock.js';
import type { Event } from '../core/event.js';
import type { MessageEdge, Window } from './window.js';

/**
 * Merges the events of every source (network capture, log tails, probe tails, client ops, the
 * nemesis) on the host's monotonic clock and cuts them into one window per step.
 *
 * Per step the campaign calls, in order:
 * ```ts
 * const timeline = new Timeline();            // one per run; tails call timeline.ingest(event)
 * // step i runs over [startTs, endTs) (host ns, monoNs())
 * const window = await timeline.close(i, startTs, endTs); // resolves ≈ graceMs after endTs
 * const { states } = coverage.observe(window, fault);      // abstraction + metrics
 * ```
 * `close` waits until `endTs + graceMs` on the host clock, because tails deliver events late
 * (a poll period, a probe flush). Events older than the end of the last closed window are then
 * dropped on arrival (counted in `stats.late`), so memory holds at most about one window.
 * Between schedules (reset), call `discardBefore(monoNs())` so reset noise does not pile up.
 *
 * Order: a window's events are sorted by `ts`; equal stamps keep their arrival order, so events of
 * one node from one source keep their order. Sends and receives (`type` `send`/`recv` from `net`
 * or `probe`, with `attrs.msg`) with the same message id become {@link MessageEdge}s; a receive
 * matches the latest earlier send of its id, from this window or the previous one.
 */
export interface TimelineOptions {
  /** How long after a window's end its events are awaited (default 150 ms). */
  readonly graceMs?: number;
  /** Host clock in ns (tests and benchmarks inject one); default the clock's `monoNs`. */
  readonly now?: () => number;
  /** What the grace is waited on (default the host's clock; a simulated run's is virtual). */
  readonly clock?: Clock;
  /**
   * Events buffered before the oldest quarter is dropped: a bound on memory (about 300 bytes an
   * event) when a system floods its logs or the network, or windows stop being closed.
   */
  readonly maxBuffered?: number;
}

export const DEFAULT_GRACE_MS = 150;
const DEFAULT_MAX_BUFFERED = 250_000;

export interface TimelineStats {
  readonly ingested: number;
  /** Arrived after their window was closed. */
  readonly late: number;
  /** Dropped because the buffer was full or they fell between windows. */
  readonly dropped: number;
  /** Of those, dropped because the buffer was full. */
  readonly shed: number;
  readonly buffered: number;
}

function messageKey(e: Event): string | undefined {
  if (e.source !== 'net' && e.source !== 'probe') return undefined;
  if (e.type !== 'send' && e.type !== 'recv') return undefined;
  const msg = e.attrs?.msg;
  return msg === undefined ? undefined : `${e.source}\u0000${String(msg)}`;
}

export class Timeline {
  private readonly graceNs: number;
  private readonly now: () => number;
  private readonly clock: Clock;
  private readonly maxBuffered: number;
  private buffer: Event[] = [];
  private floorTs = -Infinity;
  private previousSends = new Map<string, Event>();
  private chain: Promise<unknown> = Promise.resolve();
  private ingested = 0;
  private late = 0;
  private dropped = 0;
  private shedCount = 0;

  constructor(options: TimelineOptions = {}) {
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    if (!(graceMs >= 0)) throw new RangeError(`Timeline graceMs should be ≥ 0, got ${graceMs}`);
    this.graceNs = graceMs * NS_PER_MS;
    this.clock = options.clock ?? realClock;
    const clock = this.clock;
    this.now = options.now ?? (() => clock.monoNs());
    this.maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
  }

  get stats(): TimelineStats {
    return {
      ingested: this.ingested,
      late: this.late,
      dropped: this.dropped,
      shed: this.shedCount,
      buffered: this.buffer.length,
    };
  }

  /** Adds one event from any source. Cheap: events are only sorted when a window is cut. */
  ingest(event: Event): void {
    this.ingested++;
    if (event.ts < this.floorTs) {
      this.late++;
      return;
    }
    this.buffer.push(event);
    if (this.buffer.length > this.maxBuffered) this.shed();
  }

  /**
   * Closes window `index` over `[startTs, endTs)`: resolves once the host clock passes
   * `endTs + graceMs`. Windows must be closed in order, with non-decreasing `endTs`; calls made
   * before an earlier close resolved are queued behind it.
   */
  close(index: number, startTs: number, endTs: number): Promise<Window> {
    if (!(endTs >= startTs)) {
      return Promise.reject(new RangeError(`window ${index} ends (${endTs}) before it starts (${startTs})`));
    }
    const next = this.chain.then(async () => {
      const waitMs = (endTs + this.graceNs - this.now()) / NS_PER_MS;
      if (waitMs > 0) await this.clock.sleep(Math.ceil(waitMs));
      return this.cut(index, startTs, endTs);
    });
    // The chain only orders closes: it must not hold on to the window once it is handed over.
    this.chain = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Cuts window `index` now, without a grace period (what `close` does once it has waited). */
  cut(index: number, startTs: number, endTs: number): Window {
    if (endTs < this.floorTs) {
      throw new RangeError(`window ${index} ends (${endTs}) before the last closed window (${this.floorTs})`);
    }
    const all = this.buffer;
    sortByTs(all);
    const events: Event[] = [];
    const keep: Event[] = [];
    for (const e of all) {
      if (e.ts >= endTs) keep.push(e);
      else if (e.ts >= startTs) events.push(e);
      else this.dropped++;
    }
    this.buffer = keep;
    this.floorTs = endTs;
    const edges: MessageEdge[] = [];
    const sends = new Map(this.previousSends);
    const windowSends = new Map<string, Event>();
    for (const e of events) {
      const key = messageKey(e);
      if (key === undefined) continue;
      if (e.type === 'send') {
        sends.set(key, e);
        windowSends.set(key, e);
      } else {
        const send = sends.get(key);
        if (send) edges.push({ send, recv: e });
      }
    }
    this.previousSends = windowSends;
    return { index, startTs, endTs, events, edges };
  }

  /** Drops everything before `ts` (e.g. at a schedule's start, after the reset). */
  discardBefore(ts: number): void {
    const before = this.buffer.length;
    this.buffer = this.buffer.filter((e) => e.ts >= ts);
    this.dropped += before - this.buffer.length;
    this.floorTs = Math.max(this.floorTs, ts);
    this.previousSends = new Map();
  }

  private shed(): void {
    sortByTs(this.buffer);
    const n = Math.ceil(this.buffer.length / 4);
    this.buffer.splice(0, n);
    this.dropped += n;
    this.shedCount += n;
  }
}

function sortByTs(events: Event[]): void {
  for (let i = 1; i < events.length; i++) {
    if (events[i].ts < events[i - 1].ts) {
      events.sort((a, b) => a.ts - b.ts);
      return;
    }
  }
}
