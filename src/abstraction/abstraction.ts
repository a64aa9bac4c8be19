import type { State } from '../core/state.js';
import type { Window } from '../timeline/window.js';

/** Turns a window of events into an abstract state. */
export interface Abstraction {
  readonly name: string;
  abstract(window: Window): State;
  /** Called at the start of each schedule (the cluster was reset): forget per-episode memory. */
  resetEpisode?(): void;
  /**
   * Re-creates a state an earlier or another campaign saw (its sorted features), in the order it
   * was first seen; returns the id it has here.
   */
  seed?(features: readonly string[]): string;
}
