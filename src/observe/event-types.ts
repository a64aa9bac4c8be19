import type { Event, EventSource } from '../core/event.js';

/** Client ops and the nemesis's own ops are what Mallory does, not what the system does. */
const IGNORED_SOURCES: readonly EventSource[] = ['client', 'nemesis'];

/**
 * The event types a run has observed so far, with their counts, as events arrive: what triggered
 * actions are built from, so any system offers its own without configuration.
 */
export class EventTypes {
  /** Insertion order is recency: a type is moved to the end each time it is seen. */
  private readonly counts = new Map<string, number>();

  observe(event: Event): void {
    if (IGNORED_SOURCES.includes(event.source)) return;
    const n = this.counts.get(event.type) ?? 0;
    this.counts.delete(event.type);
    this.counts.set(event.type, n + 1);
  }

  get size(): number {
    return this.counts.size;
  }

  count(type: string): number {
    return this.counts.get(type) ?? 0;
  }

  /** Every type seen, the least recently seen first. */
  byRecency(): string[] {
    return [...this.counts.keys()];
  }
}
