import type { NodeRuntime } from './runtime.js';

/** Where the nodes of a run are: each node's runtime and the run's dir on its host. */
export interface NodeLayout {
  runtimeOf(node: string): NodeRuntime;
  /** The run's dir on the node's host: data in `<root>/<node>`. */
  readonly root: string;
  /** Files of a node's output dir streamed back besides stdout and stderr (e.g. `probe.jsonl`). */
  readonly streamed: readonly string[];
  /** Makes the run's dir on the node's host (recorded in the registry before it is made). */
  prepareHost(node: string): Promise<void>;
}
