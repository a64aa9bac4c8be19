import type { Command } from 'commander';

import { UsageError } from '../../core/errors.js';
import { FLEET_WORKER_ENV } from '../../fleet/local-fleet.js';
import { readPlan, workerIndex } from '../../fleet/plan.js';
import { runPlanIndex, WORKER_EXIT } from '../../fleet/worker.js';
import { guardCampaigns } from '../campaign-guard.js';
import { ConsoleLogReporter } from '../console-log-reporter.js';
import { ProgressReporter } from '../progress-reporter.js';
import { sayLine as say } from './say-line.js';

/** The flags `run --plan` takes besides the plan: everything else is the plan's. */
const WORKER_FLAGS = new Set(['plan', 'index', 'json']);

/**
 * Stops the worker (as SIGTERM does) when its stdin closes, for a worker `mallory fleet run`
 * started with a pipe as stdin: a fleet killed outright still stops its workers.
 */
function stopWhenStdinCloses(): () => void {
  if (process.env[FLEET_WORKER_ENV] !== '1') return () => undefined;
  const stop = (): void => {
    process.kill(process.pid, 'SIGTERM');
  };
  process.stdin.on('data', () => undefined);
  process.stdin.once('end', stop);
  process.stdin.resume();
  return () => {
    process.stdin.off('end', stop);
    process.stdin.pause();
    process.stdin.destroy();
  };
}

/**
 * `mallory run --plan FILE [--index N]`: one campaign of a plan, run as a batch worker. Its exit
 * status says whether an engine should retry it: 0 the campaign ran (whatever it found), 2 the
 * plan or index is wrong, 3 the campaign failed on its infrastructure, 130 interrupted.
 */
export async function runPlanWorker(
  file: string,
  indexFlag: string | undefined,
  json: boolean,
  command: Command,
  setExit: (code: number) => void,
): Promise<void> {
  const others = command.options
    .map((o) => o.attributeName())
    .filter((name) => !WORKER_FLAGS.has(name) && command.getOptionValueSource(name) === 'cli');
  if (others.length > 0) {
    const flag = command.options.find((o) => o.attributeName() === others[0])?.long ?? others[0];
    throw new UsageError(
      'bad-flag',
      `${flag} cannot be given with --plan: a worker runs its campaign as the plan says (write another plan with \`mallory plan\` to change it)`,
    );
  }
  const plan = readPlan(file);
  const index = workerIndex(plan, indexFlag);
  const stopWatching = stopWhenStdinCloses();
  try {
    await guardCampaigns(async ({ signal, onRegistry }) => {
      const outcome = await runPlanIndex(plan, index, {
        reporters: [new ProgressReporter(), new ConsoleLogReporter()],
        signal,
        onRegistry,
        say,
      });
      if (json) process.stdout.write(JSON.stringify(outcome.record, null, 2) + '\n');
      if (outcome.code === WORKER_EXIT.done && !outcome.skipped) {
        const n = outcome.record.findings?.length ?? 0;
        say(
          `plan ${plan.id}: campaign ${index} done: ${n} finding${n === 1 ? '' : 's'} (exit 0: a finding is data for a worker; \`mallory fleet report ${plan.file}\` merges them)`,
        );
      }
      setExit(outcome.code);
    }, WORKER_EXIT.infrastructure);
  } finally {
    stopWatching();
  }
}
