import type { State } from '../core/state.js';
import type { Window } from '../timeline/window.js';
import type { Abstraction } from './abstraction.js';
import { type ClusterOptions, StateClusters } from './clusters.js';
import { intraPairs } from './pairs.js';

/**
 * The Mallory artifact's state abstraction, as its mediator computes it (`EventHistory`,
 * `get_state_id`): per node, every ordered pair (a, b) of internal event types where a occurred
 * before b in the window (see `pairs.ts`); the union over nodes, node identity dropped; the hash of
 * the sorted pairs; then MinHash (100 hashes) clustering, the first representative with similarity
 * above the threshold (default 0.7, the artifact's example) giving the id. Messages, client ops
 * and faults do not enter the state.
 *
 * Stateful (the clusters): one instance per campaign. `features` are the sorted pairs `a > b`.
 */
export class ArtifactAbstraction implements Abstraction {
  readonly name = 'artifact';
  private readonly clusters: StateClusters;

  constructor(options: ClusterOptions = {}) {
    this.clusters = new StateClusters(options);
  }

  seed(features: readonly string[]): string {
    return this.clusters.assign(features);
  }

  abstract(window: Window): State {
    const features = [...intraPairs(window.events, new Set())].sort();
    return { id: this.clusters.assign(features), features };
  }
}
