import { afterAll, beforeAll, describe } from 'vitest';

import type { SystemAdapter, SystemDefinition } from '../../../src/systems/system.js';
import { TestCluster } from './cluster.js';

export interface RealSystemSuite {
  /** What the suite's title calls the system, e.g. `redis + sentinel`. */
  readonly title: string;
  /** Why the suite cannot run here (see `skipReason`), or undefined when it can. */
  readonly skip: string | undefined;
  readonly system: SystemDefinition;
  readonly nodes: readonly string[];
  /** How long the cluster may take to become ready before the first test. */
  readonly readyTimeoutMs: number;
}

/**
 * A suite against real servers: skipped (saying why) when it cannot run here; otherwise a cluster of
 * `nodes` is started and ready before its tests and closed after them. `tests` gets the cluster as a
 * function, because it exists only once the suite runs.
 */
export function describeRealSystem(
  suite: RealSystemSuite,
  tests: (adapter: SystemAdapter, cluster: () => TestCluster) => void,
): void {
  const title = `${suite.title} (real servers)${suite.skip ? `: skipped, ${suite.skip}` : ''}`;
  describe.skipIf(suite.skip !== undefined)(title, () => {
    const adapter = suite.system.create({ bugs: [] });
    let cluster: TestCluster | undefined;

    beforeAll(async () => {
      cluster = await TestCluster.create(adapter, suite.nodes);
      await cluster.startAll();
      await cluster.untilReady(suite.readyTimeoutMs);
    });

    afterAll(async () => {
      await cluster?.close();
    });

    tests(adapter, () => {
      if (cluster === undefined) throw new Error(`${suite.title}: the cluster exists only inside a test`);
      return cluster;
    });
  });
}
