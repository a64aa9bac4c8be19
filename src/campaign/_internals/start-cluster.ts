import { join } from 'node:path';

import { UsageError } from '../../core/errors.js';
import { Interrupted } from './interrupted.js';
import type { LiveRun } from './live-run.js';

const STARTUP_READY_MS = 60_000;

/** Starts every node and waits for the system to serve; one that never does is the user's to fix. */
export async function startCluster(live: LiveRun): Promise<void> {
  const { signal, plan, store, parts } = live;
  await parts.cluster.startAll();
  if (await parts.cluster.waitReady(STARTUP_READY_MS, signal)) return;
  if (signal.aborted) throw new Interrupted();
  throw new UsageError(
    'not-ready',
    `${plan.definition.name} did not serve requests within ${STARTUP_READY_MS / 1000} s of starting: see ${join(store.dir, 'nodes')}`,
  );
}
