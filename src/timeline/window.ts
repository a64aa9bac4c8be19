import type { Event } from '../core/event.js';

/** A happens-before edge: a send and the receive with the same `attrs.msg` (net or probe). */
export interface MessageEdge {
  readonly send: Event;
  readonly recv: Event;
}

/** The events of one step, on the host clock, with happens-before edges from net send/recv. */
export interface Window {
  readonly index: number;
  readonly startTs: number;
  readonly endTs: number;
  /** Sorted by `ts`. */
  readonly events: readonly Event[];
  /**
   * Edges whose receive is in this window, sorted by the receive's `ts`; the send may be in this
   * window or the one before. Absent when the window was not built by a `Timeline`.
   */
  readonly edges?: readonly MessageEdge[];
}
