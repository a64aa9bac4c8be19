import { UsageError } from '../core/errors.js';
import { fleetReport } from '../fleet/fleet-report.js';
import { runLocalFleet } from '../fleet/local-fleet.js';
import { readPlan } from '../fleet/plan.js';
import { fleetStatus } from '../fleet/status.js';
import { fleetReportText, fleetStatusText } from './_internals/fleet-text.js';
import type { RegisterCommand } from './command.js';
import { sayLine as say } from './_internals/say-line.js';

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export const registerFleet: RegisterCommand = (program, setExit) => {
  const fleet = program
    .command('fleet')
    .description(
      "run a plan's campaigns on this machine, and follow and merge a plan's runs wherever they ran",
    );

  fleet
    .command('run <plan>')
    .description(
      "run the plan's unfinished campaigns here, N at a time, each as `mallory run --plan PLAN --index I`; run it again to go on after a stop",
    )
    .option('--workers <n>', 'campaigns at once', '2')
    .option(
      '--hosts <list>',
      'run the workers on SSH hosts (not available yet: run `mallory run --plan` on each host)',
    )
    .action(async (file: string, flags: { workers: string; hosts?: string }) => {
      if (flags.hosts !== undefined) {
        throw new UsageError(
          'bad-flag',
          "--hosts: fleet workers on SSH hosts are not done yet (a campaign's nodes on hosts are: `mallory run --hosts`): start `mallory run --plan PLAN --index N` on each host (the plan's store on a shared volume)",
        );
      }
      const workers = Number(flags.workers);
      if (!Number.isInteger(workers) || workers < 1) {
        throw new UsageError('bad-flag', `--workers needs a whole number ≥ 1, got "${flags.workers}"`);
      }
      const plan = readPlan(file);
      const controller = new AbortController();
      let interrupts = 0;
      const onSignal = (signal: NodeJS.Signals): void => {
        interrupts++;
        if (interrupts === 1) {
          say(`fleet ${plan.id}: ${signal}: stopping every worker (each removes what its run made)`);
          controller.abort();
        }
      };
      for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
      try {
        const outcome = await runLocalFleet(plan, {
          workers,
          workerCommand: [process.execPath, process.argv[1], 'run'],
          signal: controller.signal,
          say,
        });
        const status = fleetStatus(plan);
        say(fleetStatusText(status, { short: true }));
        if (controller.signal.aborted) setExit(130);
        else setExit(outcome.failed.length > 0 ? 3 : 0);
      } finally {
        for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
      }
    });

  fleet
    .command('status <plan>')
    .description(
      'each campaign of the plan: done, running (by which worker), pending, failed; findings so far',
    )
    .option('--json', 'print the status as one JSON document on stdout')
    .action((file: string, flags: { json?: boolean }) => {
      const status = fleetStatus(readPlan(file));
      process.stdout.write(
        flags.json ? JSON.stringify(status, null, 2) + '\n' : fleetStatusText(status) + '\n',
      );
      setExit(0);
    });

  fleet
    .command('report <plan>')
    .description(
      "merge the plan's done runs: per comparison Â12 and p as `compare` gives them, distinct states over all workers, findings deduplicated across workers (report.html and results.json)",
    )
    .option('--json', 'print the report as one JSON document on stdout')
    .action((file: string, flags: { json?: boolean }) => {
      const report = fleetReport(readPlan(file));
      process.stdout.write(
        flags.json ? JSON.stringify(report, null, 2) + '\n' : fleetReportText(report) + '\n',
      );
      setExit(0);
    });
};
