import { resolve } from 'node:path';

import type { ResourceRegistry } from '../../cluster/resources.js';
import { writeStoreIndex } from '../../report/store-index.js';
import { writeRunReport } from '../../report/write-run-report.js';
import type { RunStore } from '../../store/run-store.js';
import type { RunConfig } from '../config.js';
import type { RunSummary } from '../reporter.js';
import type { Emit } from './emitter.js';
import type { RunOutcome } from './run-outcome.js';

/**
 * Ends the stored run: its status and summary written, the store closed, the registry's file
 * removed. A usage error is thrown then; otherwise the report is written and the summary said.
 */
export async function finishRun(
  summary: RunSummary,
  outcome: RunOutcome,
  run: {
    readonly store: RunStore;
    readonly registry: ResourceRegistry;
    readonly config: RunConfig;
    readonly emit: Emit;
  },
): Promise<RunSummary> {
  const { store, registry, config, emit } = run;
  if (outcome.storeFull) {
    // Whether the end would still fit depends on where in its writes the disk filled: record
    // nothing more, so that every full disk ends the same way — the registry's file kept, and
    // `mallory cleanup`, once there is room, marks the run cut short.
    try {
      store.close();
    } catch {
      // a database that cannot even close is what cleanup is for
    }
    throw outcome.storeFull;
  }
  store.finish(summary.status, summary);
  store.close();
  // Only now: until the final status is on disk, `mallory cleanup` must be able to find the run.
  registry.removeFile();
  if (outcome.usageError) throw outcome.usageError;
  const reported: RunSummary = {
    ...summary,
    ...(await writeReport(store.dir, resolve(config.store))),
  };
  emit('runEnded', reported);
  return reported;
}

/**
 * The run's report.html and results.json, and the store's index refreshed, once the run is
 * stored; a report that cannot be written is said, and loses nothing (`mallory report` retries).
 */
async function writeReport(
  runDir: string,
  storeDir: string,
): Promise<Pick<RunSummary, 'report' | 'reportError'>> {
  try {
    const { html } = await writeRunReport(runDir);
    writeStoreIndex(storeDir);
    return { report: html };
  } catch (e) {
    return { reportError: e instanceof Error ? e.message : String(e) };
  }
}
