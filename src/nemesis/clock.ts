import { clockControlFile, writeControlFile } from '../cluster/clock-preload.js';

/** How often drifting and strobing clocks get their control file rewritten. */
export const CLOCK_TICK_MS = 50;

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
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly runDir: string,
    private readonly now: () => number = Date.now,
  ) {}

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
      writeControlFile(clockControlFile(this.runDir, node), 0);
    }
    this.retick();
  }

  /** Stops the ticker (control files stay in the run dir, as the record of the last offsets). */
  close(): void {
    this.reset();
    if (this.ticker) clearInterval(this.ticker);
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
    for (const node of nodes) writeControlFile(clockControlFile(this.runDir, node), this.offsetMs(node));
    this.retick();
  }

  /** Runs the ticker while some clock drifts or strobes. */
  private retick(): void {
    const moving = [...this.clocks.values()].some((c) => c.drift ?? c.strobe);
    if (moving && !this.ticker) {
      this.ticker = setInterval(() => {
        for (const [node, clock] of this.clocks) {
          if (clock.drift ?? clock.strobe) {
            writeControlFile(clockControlFile(this.runDir, node), this.offsetMs(node));
          }
        }
      }, CLOCK_TICK_MS);
      this.ticker.unref();
    } else if (!moving && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }
}
