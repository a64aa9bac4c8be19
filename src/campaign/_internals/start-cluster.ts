import { join } from 'node:path';

import type { ReadyAttempt } from '../../cluster/node-system.js';
import { UsageError } from '../../core/errors.js';
import { Interrupted } from './interrupted.js';
import type { LiveRun } from './live-run.js';

/** Starts every node and waits for the system to serve; one that never does is the user's to fix. */
export async function startCluster(live: LiveRun): Promise<void> {
  const { signal, plan, store, parts, config } = live;
  await parts.cluster.startAll();
  if (signal.aborted) throw new Interrupted();
  const attempts: ReadyAttempt[] = [];
  if (await parts.cluster.waitReady(config.startupTimeoutMs, signal, attempts)) return;
  if (signal.aborted) throw new Interrupted();
  const name = plan.definition.name;
  const seconds = config.startupTimeoutMs / 1000;
  const logs = join(store.dir, 'nodes');
  // Every call hanging is the adapter's bug, not a slow system: say so rather than "did not serve".
  if (attempts.length > 0 && attempts.every((a) => a.unanswered)) {
    throw new UsageError(
      'ready-unanswered',
      `${name}: ready() never answered within ${seconds} s of starting (its promise neither resolved nor rejected): make ready() settle, and stop when its signal aborts; node logs in ${logs}`,
    );
  }
  throw new UsageError(
    'not-ready',
    `${name} did not serve requests within ${seconds} s of starting: see ${logs}; a system that starts slower needs a longer --startup-timeout`,
  );
}
