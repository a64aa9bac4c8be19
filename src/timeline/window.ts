import type { Event } from '../core/event.js';

/** The events of one step, on the host clock, with happens-before edges from net send/recv. */
export interface Window {
  readonly index: number;
  readonly startTs: number;
  readonly endTs: number;
  /** Sorted by `ts`. */
  readonly events: readonly Event[];
}
