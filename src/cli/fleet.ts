import { resolve } from 'node:path';

import { UsageError } from '../core/errors.js';
import { fleetReport } from '../fleet/fleet-report.js';
import { hostTargets } from '../campaign/plan-hosts.js';
import { hostWorkers } from '../fleet/host-workers.js';
import { localSlots, runFleet } from '../fleet/local-fleet.js';
import { readPlan } from '../fleet/plan.js';
import { fleetStatus } from '../fleet/status.js';
import { addHostOptions, type HostFlags, runConfigOfHostFlags } from './_internals/doctor-hosts.js';
import { fleetReportText, fleetStatusText } from './_internals/fleet-text.js';
import { packageVersion } from './_internals/package-version.js';
import type { RegisterCommand } from './command.js';
import { sayLine as say } from './_internals/say-line.js';

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

interface FleetRunFlags extends HostFlags {
  readonly workers: string;
  readonly malloryCommand?: string;
  readonly planOnHosts?: string;
}

export const registerFleet: RegisterCommand = (program, setExit) => {
  const fleet = program
    .command('fleet')
    .description(
      "run a plan's campaigns on this machine, and follow and merge a plan's runs wherever they ran",
    );

  const run = fleet
    .command('run <plan>')
    .description(
      "run the plan's unfinished campaigns here (or on SSH hosts), N at a time, each as `mallory run --plan PLAN --index I`; run it again to go on after a stop",
    )
    .option('--workers <n>', 'campaigns at once (with --hosts: on each host)', '2');
  addHostOptions(run, {
    hostsHelp:
      "run the workers on these SSH hosts instead (a file, one [user@]host[:port] a line, or h1,h2): each needs Mallory and the plan's store mounted",
    afterHosts: (command) =>
      command
        .option(
          '--mallory-command <words>',
          'with --hosts: the command that runs Mallory on the hosts, split on spaces (default: mallory)',
        )
        .option(
          '--plan-on-hosts <path>',
          "with --hosts: the plan file's path on the hosts (default: its path here, the store mounted at the same path)",
        ),
  });
  run.action(async (file: string, flags: FleetRunFlags) => {
    const workers = Number(flags.workers);
    if (!Number.isInteger(workers) || workers < 1) {
      throw new UsageError('bad-flag', `--workers needs a whole number ≥ 1, got "${flags.workers}"`);
    }
    if (
      flags.hosts === undefined &&
      (flags.malloryCommand !== undefined || flags.planOnHosts !== undefined)
    ) {
      throw new UsageError(
        'bad-flag',
        '--mallory-command and --plan-on-hosts go with --hosts: add --hosts or drop them',
      );
    }
    const plan = readPlan(file);
    const remote =
      flags.hosts === undefined
        ? undefined
        : await hostWorkers(plan, {
            targets: hostTargets(runConfigOfHostFlags(flags, plan.system)),
            perHost: workers,
            malloryCommand: (flags.malloryCommand ?? 'mallory').split(/\s+/).filter((w) => w !== ''),
            planOnHosts: flags.planOnHosts ?? resolve(plan.file),
            version: packageVersion(),
          });
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
      const outcome = await runFleet(plan, {
        slots: remote?.slots ?? localSlots(workers, [process.execPath, process.argv[1], 'run'], plan.file),
        signal: controller.signal,
        say,
      });
      const status = fleetStatus(plan);
      say(fleetStatusText(status, { short: true }));
      if (controller.signal.aborted) setExit(130);
      else setExit(outcome.failed.length > 0 ? 3 : 0);
    } finally {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
      await remote?.close();
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
