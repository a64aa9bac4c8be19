import { join } from 'node:path';

import { serving, type Recovery } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';

/**
 * When healing was not enough, starts the cluster afresh, or the rest of the campaign would only
 * find the same stuck cluster again; throws when even that does not serve. A fresh start is waited
 * for as the first start is (`startupTimeoutMs`), not by the recovery bound, which is about
 * recovering from faults.
 */
export async function hardResetIfStuck(live: LiveRun, recovery: Recovery): Promise<void> {
  const { config, signal, state, plan, store, parts, history } = live;
  if (serving(recovery) || signal.aborted) return;
  const { cluster } = parts;
  state.phase = 'resetting';
  history.record({ type: 'info', process: 'nemesis', f: 'hard-reset', value: cluster.nodes });
  await cluster.restartFresh();
  const fresh = await cluster.waitReady(config.startupTimeoutMs, signal);
  history.record({
    type: 'info',
    process: 'nemesis',
    f: 'hard-reset',
    value: cluster.nodes,
    ...(fresh ? {} : { error: 'did not serve after a fresh start' }),
  });
  history.takeSegment(); // after the schedule's checks: no schedule checks it
  if (!fresh && !signal.aborted) {
    throw new Error(
      `${plan.definition.name} did not serve within ${config.startupTimeoutMs / 1000} s (--startup-timeout) even after a fresh start of every node: see ${join(store.dir, 'nodes')}`,
    );
  }
}
