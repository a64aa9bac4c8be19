import type { RunParts } from '../create-run.js';
import type { ScheduleRunnerDeps } from '../schedule-runner.js';

/** What the schedule runner and armed triggers ask of the cluster and the observers. */
export type ClusterQueries = Pick<ScheduleRunnerDeps, 'leader' | 'nodes' | 'running' | 'onEvent'>;

export function clusterQueries(parts: RunParts): ClusterQueries {
  const { cluster, nemesis, observation } = parts;
  return {
    leader: () => nemesis.leader(),
    nodes: () => cluster.nodes,
    running: () => cluster.nodesIn('running').filter((n) => cluster.isMember(n)),
    onEvent: (listener) => observation.onEvent(listener),
  };
}
