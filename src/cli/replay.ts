import { statSync } from 'node:fs';
import { join } from 'node:path';

import { Option } from 'commander';

import { bugStore, describeStart, replayBug, readBug, replayStart } from '../campaign/replay.js';
import { pluginSources } from '../campaign/plugin-copies.js';
import { describeDependence, recordReplay, REPLAYS_FILE, stateDependence } from '../store/replay-record.js';
import { DURABILITIES, type Durability } from '../check/durability.js';
import { UsageError } from '../core/errors.js';
import { EXIT_FOUND_BUG, EXIT_INTERRUPTED, guardCampaigns } from './campaign-guard.js';
import type { RegisterCommand } from './command.js';
import { ProgressReporter } from './progress-reporter.js';
import { collect, DURABILITY_HELP, SET_HELP } from './run.js';
import { parseSetFlags } from '../systems/settings.js';
import { addHostOptions, type HostFlags, runConfigOfHostFlags } from './_internals/doctor-hosts.js';

interface ReplayFlags extends HostFlags {
  repeat: string;
  set: string[];
  durability?: Durability;
  store?: string;
  recordedPlugins?: boolean;
  json?: boolean;
  verbose?: boolean;
  fresh?: boolean;
  real?: boolean;
}

/** `--fresh` of replay and shrink. */
export const FRESH_HELP =
  "start every try on empty data dirs, not from the checkpoint of the bug's schedule (the state earlier schedules left)";

/** `--recorded-plugins` of replay and shrink. */
export const RECORDED_PLUGINS_HELP =
  "run the copies of the run's --system / --workload modules the bug keeps (without it, a replay refuses modules changed since the bug was found)";

/** `--verbose` of replay and shrink: each try's whole campaign output, instead of one line per try. */
export const VERBOSE_HELP = "print each try's whole campaign output (by default one line per try)";

export const registerReplay: RegisterCommand = (program, setExit) => {
  const command = program
    .command('replay')
    .description('run a bug again from its directory alone, and say how often it reproduced')
    .argument('<bug-dir>', 'a bug record: store/<system>/<run>/bugs/<id>')
    .option('--repeat <n>', 'how many times to run it', '1')
    .option('--set <name=value>', `${SET_HELP}; replaces the recorded value`, collect, [])
    .addOption(
      new Option('--durability <level>', `${DURABILITY_HELP}; replaces the recorded one`).choices(
        DURABILITIES,
      ),
    )
    .option('--store <dir>', "where the replays are stored (default: the bug's own store)")
    .option('--recorded-plugins', RECORDED_PLUGINS_HELP)
    .option('--json', 'print the result as one JSON document on stdout')
    .option('--verbose', VERBOSE_HELP)
    .option('--fresh', FRESH_HELP)
    .option(
      '--real',
      "a simulated bug (`mallory run --sim`) on real processes: its schedule, switches and seed on this machine's nodes, to confirm what the simulator found",
    );
  addHostOptions(command)
    .addHelpText(
      'after',
      "\nA bug of a run on hosts is replayed on the run's hosts (kept in its schedule.jsonl) unless --hosts is given.",
    )
    .action(async (bugDir: string, flags: ReplayFlags) => {
      const repeat = parseRepeat(flags.repeat);
      const settings = parseSetFlags(flags.set);
      const bug = readBug(bugDir);
      // A user's module changed since the bug was found: refused before anything runs.
      pluginSources(bug.dir, bug.header.plugins ?? [], flags.recordedPlugins ?? false);
      const h = bug.header;
      const hosts = flags.hosts !== undefined ? runConfigOfHostFlags(flags, h.system) : h.hosts;
      const start = replayStart(bug, flags.fresh ?? false, flags.real === true);
      if (flags.real === true && h.simulated === undefined) {
        throw new UsageError(
          'bad-flag',
          `--real: ${bug.dir} is not a simulated bug; it already replays on real processes (drop --real)`,
        );
      }
      const real = flags.real === true;
      process.stderr.write(
        `mallory replay: ${h.finding.kind}/${h.finding.name} on ${h.system} (${h.nodes} nodes` +
          `${h.bugs.length > 0 ? `, --bug ${h.bugs.join(' --bug ')}` : ''}${describeSet({ ...h.settings, ...settings })}` +
          `${(flags.durability ?? h.durability) !== undefined ? `, --durability ${flags.durability ?? h.durability}` : ''}, seed ${h.seed}), ${repeat} time(s), from ${bug.scheduleFile}\n` +
          `  start: ${describeStart(start)}\n` +
          (hosts?.hosts !== undefined ? `  on hosts: ${hosts.hosts.map((x) => x.host).join(', ')}\n` : '') +
          (h.simulated !== undefined
            ? real
              ? `  found in the simulator (world seed ${h.simulated.seed}); replayed on real processes, cuts as ${h.simulated.partitions}: each try may differ\n`
              : `  simulated: a world of seed ${h.simulated.seed}, disks ${h.simulated.contract}, cuts as ${h.simulated.partitions}: every try runs the same (exact replay)\n`
            : ''),
      );
      const result = await guardCampaigns(({ signal, onRegistry }) =>
        replayBug({
          bug,
          repeat,
          store: flags.store ?? bugStore(bug),
          recordedPlugins: flags.recordedPlugins ?? false,
          settings,
          ...(flags.durability !== undefined ? { durability: flags.durability } : {}),
          fresh: flags.fresh ?? false,
          real,
          ...(hosts?.hosts !== undefined ? { hosts } : {}),
          signal,
          reporters: flags.verbose ? [new ProgressReporter()] : [],
          onRegistry,
          onTry: (i, t) => {
            process.stderr.write(
              `replay ${i + 1}/${repeat}: ${t.reproduced ? 'reproduced' : 'not reproduced'}` +
                ` (found: ${t.found.length > 0 ? t.found.join(', ') : 'nothing'})` +
                `${t.status === 'complete' ? '' : `, ${t.status}`} — ${t.runDir}\n`,
            );
          },
        }),
      );
      // The bug's own schedule as recorded: its rate from this start joins the bug's record.
      const asRecorded =
        statSync(bugDir).isDirectory() && flags.set.length === 0 && flags.durability === undefined;
      if (asRecorded && result.tries.length > 0) {
        recordReplay(bug.dir, {
          atMs: Date.now(),
          // A simulated prefix starts where the schedule began, as a checkpoint does.
          start: result.start.kind === 'prefix' ? 'checkpoint' : result.start.kind,
          reproduced: result.reproduced,
          tries: result.tries.length,
        });
        const dependence = stateDependence(bug.dir);
        if (dependence?.checkpoint && dependence.fresh) {
          process.stderr.write(`${describeDependence(dependence)} (${join(bug.dir, REPLAYS_FILE)})\n`);
        }
      }
      const line = `reproduced ${result.reproduced}/${result.tries.length} (${h.finding.kind}/${h.finding.name})`;
      if (flags.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
      else process.stdout.write(line + '\n');
      setExit(result.interrupted ? EXIT_INTERRUPTED : result.reproduced > 0 ? EXIT_FOUND_BUG : 0);
    });
};

function describeSet(settings: Readonly<Record<string, string>>): string {
  return Object.entries(settings)
    .map(([name, value]) => `, --set ${name}=${value}`)
    .join('');
}

/** `--repeat N` of replay and shrink: a whole number of at least 1. */
export function parseRepeat(text: string): number {
  const repeat = Number(text);
  if (!Number.isInteger(repeat) || repeat < 1) {
    throw new UsageError('bad-flag', `--repeat needs a whole number of at least 1, got "${text}"`);
  }
  return repeat;
}
