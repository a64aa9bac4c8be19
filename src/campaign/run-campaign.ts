import type { z } from 'zod';

import type { ResourceRegistry } from '../cluster/resources.js';
import { UsageError } from '../core/errors.js';
import type { RunStore } from '../store/run-store.js';
import { Campaign } from './campaign.js';
import type { ScheduleChecker } from './checker.js';
import { RunConfigSchema } from './config.js';
import type { Reporter, RunSummary } from './reporter.js';

/** A campaign's configuration as written by hand: every field but `system` has a default. */
export type RunConfigInput = z.input<typeof RunConfigSchema>;

export interface RunOptions {
  /** Hooks on the run's events (progress, faults, bugs); none by default. */
  readonly reporters?: readonly Reporter[];
  /** Aborting it stops the campaign as Ctrl-C does: the summary's status is `interrupted`. */
  readonly signal?: AbortSignal;
  /**
   * Checks on each schedule, instead of the default: the workload's history checker (its own, or
   * a built-in's: linearizability for `register`, …) and the probe invariants.
   */
  readonly checkers?: readonly ScheduleChecker[];
  /** Hears each run's resource registry and store (a crash handler uses them to clean up). */
  readonly onRegistry?: (registry: ResourceRegistry, store: RunStore) => void;
}

/**
 * Runs one fuzzing campaign, as `mallory run` does, and returns its summary (bugs found, run
 * directory, coverage). `config.system` is a built-in name or the path of a system module.
 * Throws a `UsageError` for what the user must fix (a bad config, an unknown system or bug switch,
 * missing binaries, a system that never serves); any other failure ends the campaign with status
 * `error` in the summary.
 *
 * ```ts
 * const summary = await run({ system: './my-system.js', timeMs: 60_000, seed: 1 });
 * if (summary.bugs.length > 0) console.log(summary.bugs[0].message);
 * ```
 */
export async function runCampaign(config: RunConfigInput, options: RunOptions = {}): Promise<RunSummary> {
  const parsed = RunConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError('bad-config', `config.${issue.path.join('.')}: ${issue.message}`);
  }
  const campaign = new Campaign({
    config: parsed.data,
    reporters: options.reporters ?? [],
    signal: options.signal ?? new AbortController().signal,
    ...(options.checkers ? { checkers: options.checkers } : {}),
    ...(options.onRegistry ? { onRegistry: options.onRegistry } : {}),
  });
  return campaign.run();
}
