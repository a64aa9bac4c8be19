import type { Clock } from '../../core/clock.js';

/** Spaces the calls of every worker sharing it `1000 / rate` ms apart. */
export class Throttle {
  private nextSlotMs = 0;

  constructor(
    private readonly rate: number,
    private readonly signal: AbortSignal,
    private readonly clock: Clock,
  ) {}

  async wait(): Promise<void> {
    const interval = 1000 / this.rate;
    const now = this.clock.nowMs();
    const slot = Math.max(now, this.nextSlotMs);
    this.nextSlotMs = slot + interval;
    if (slot > now) await this.clock.sleep(slot - now, this.signal);
  }
}
