import { clockControlFile, writeControlFile } from '../cluster/clock-preload.js';
import { LatestWrites, type WriteCounts } from './_internals/latest-writes.js';

/** How often drifting and strobing clocks get their control file rewritten. */
export const CLOCK_TICK_MS = 50;

/** Where the nodes' offsets go: each node's control file, on this host or on the node's. */
export interface ClockWriter {
  /** Puts the node's offset in its control file (at once, or queued: see `settled`). */
  write(node: string, offsetMs: number): void;
  /** Resolves once every write asked so far has landed; rejects with the first that failed since the last call. */
  settled(): Promise<void>;
}

/** Control files in the run dir on this host, written synchronously (`writeControlFile`). */
export class LocalClockWriter implements ClockWriter {
  constructor(private readonly runDir: string) {}

  write(node: string, offsetMs: number): void {
    writeControlFile(clockControlFile(this.runDir, node), offsetMs);
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Control files written by a slow `put` (a command on the node's host): per node in order, one
 * write in flight, a tick that comes meanwhile keeping only the newest offset (`LatestWrites`).
 */
export class CoalescedClockWriter implements ClockWriter {
  private readonly writes: LatestWrites<number>;

  constructor(put: (node: string, offsetMs: number) => Promise<void>) {
    this.writes = new LatestWrites(put);
  }

  write(node: string, offsetMs: number): void {
    this.writes.write(node, offsetMs).catch(() => undefined);
  }

  settled(): Promise<void> {
    return this.writes.settled();
  }

  /** How many offsets were asked for and how many were written. */
  get counts(): WriteCounts {
    return this.writes.counts;
  }
}

function everyReal(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
}

interface NodeClock {
  /** Offset from real time, in ms. */
  baseMs: number;
  drift?: { readonly rate: number; readonly sinceMs: number };
  strobe?: { readonly deltaMs: number; readonly periodMs: number; readonly sinceMs: number };
}

/**
 * The nodes' wall clocks as the nemesis sets them: offsets written to each node's control file,
 * drift and strobe advanced by a ticker until reset. Unfaulted nodes have no entry (offset 0).
 */
export class NodeClocks {
  private readonly clocks = new Map<string, NodeClock>();
  private ticker: (() => void) | undefined;
  private readonly writer: ClockWriter;

  /** `to`: the run dir whose control files are written here, or a writer of control files elsewhere. */
  constructor(
    to: string | ClockWriter,
    private readonly now: () => number = Date.now,
    /** Runs `tick` every `ms` until cancelled (default the host's timers, not holding the process). */
    private readonly every: (ms: number, tick: () => void) => () => void = everyReal,
  ) {
    this.writer = typeof to === 'string' ? new LocalClockWriter(to) : to;
  }

  /** Resolves once the offsets set so far are in the control files; rejects when a write failed. */
  settled(): Promise<void> {
    return this.writer.settled();
  }

  /** The node's current offset from real time, in ms. */
  offsetMs(node: string): number {
    const clock = this.clocks.get(node);
    if (!clock) return 0;
    const now = this.now();
    let offset = clock.baseMs;
    if (clock.drift) offset += (clock.drift.rate - 1) * (now - clock.drift.sinceMs);
    if (clock.strobe && Math.floor((now - clock.strobe.sinceMs) / clock.strobe.periodMs) % 2 === 0) {
      offset += clock.strobe.deltaMs;
    }
    return offset;
  }

  /** Nodes whose clock is off real time. */
  get faulted(): readonly string[] {
    return [...this.clocks.keys()];
  }

  /** Sets the node's clock to a fixed offset (what a checkpoint recorded), with no drift or strobe. */
  set(node: string, offsetMs: number): void {
    if (offsetMs === 0) {
      this.reset([node]);
      return;
    }
    this.clocks.set(node, { baseMs: offsetMs });
    this.apply([node]);
  }

  bump(nodes: readonly string[], deltaMs: number): void {
    for (const node of nodes) this.settle(node).baseMs += deltaMs;
    this.apply(nodes);
  }

  drift(nodes: readonly string[], rate: number): void {
    for (const node of nodes) this.settle(node).drift = { rate, sinceMs: this.now() };
    this.apply(nodes);
  }

  strobe(nodes: readonly string[], deltaMs: number, periodMs: number): void {
    for (const node of nodes) this.settle(node).strobe = { deltaMs, periodMs, sinceMs: this.now() };
    this.apply(nodes);
  }

  /** Puts the nodes' clocks back on real time (every faulted node's when `nodes` is absent). */
  reset(nodes: readonly string[] = this.faulted): void {
    for (const node of nodes) {
      if (!this.clocks.delete(node)) continue;
      this.writer.write(node, 0);
    }
    this.retick();
  }

  /**
   * Puts every clock back and stops the ticker (local control files stay in the run dir, as the
   * record of the last offsets); `settled` says when the resets have landed.
   */
  close(): void {
    this.reset();
    this.ticker?.();
    this.ticker = undefined;
  }

  /** The node's clock with what drift has done so far folded into its base offset. */
  private settle(node: string): NodeClock {
    const clock = this.clocks.get(node) ?? { baseMs: 0 };
    const now = this.now();
    if (clock.drift) {
      clock.baseMs += (clock.drift.rate - 1) * (now - clock.drift.sinceMs);
      clock.drift = { rate: clock.drift.rate, sinceMs: now };
    }
    this.clocks.set(node, clock);
    return clock;
  }

  private apply(nodes: readonly string[]): void {
    for (const node of nodes) this.writer.write(node, this.offsetMs(node));
    this.retick();
  }

  /** Runs the ticker while some clock drifts or strobes. */
  private retick(): void {
    const moving = [...this.clocks.values()].some((c) => c.drift ?? c.strobe);
    if (moving && !this.ticker) {
      this.ticker = this.every(CLOCK_TICK_MS, () => {
        for (const [node, clock] of this.clocks) {
          if (clock.drift ?? clock.strobe) this.writer.write(node, this.offsetMs(node));
        }
      });
    } else if (!moving && this.ticker) {
      this.ticker();
      this.ticker = undefined;
    }
  }
}
