import { bugStore, describeStart, readBug, replayStart } from '../campaign/replay.js';
import { pluginSources } from '../campaign/plugin-copies.js';
import { shrinkBug } from '../campaign/shrink.js';
import { EXIT_INTERRUPTED, guardCampaigns } from './campaign-guard.js';
import type { RegisterCommand } from './command.js';
import { ProgressReporter } from './progress-reporter.js';
import { invokedAs } from './_internals/invoked-as.js';
import { replayCommand } from '../core/replay-command.js';
import { FRESH_HELP, parseRepeat, RECORDED_PLUGINS_HELP, VERBOSE_HELP } from './replay.js';

interface ShrinkFlags {
  repeat?: string;
  store?: string;
  recordedPlugins?: boolean;
  json?: boolean;
  verbose?: boolean;
  fresh?: boolean;
}

const DEFAULT_REPEAT = '3';
/** The bug did not reproduce in half of the tries of its own schedule: nothing to shrink against. */
const EXIT_NOT_REPRODUCED = 1;

export const registerShrink: RegisterCommand = (program, setExit) => {
  program
    .command('shrink')
    .description("drop the faults a bug does not need: delta debugging over its schedule's fault lines")
    .argument('<bug-dir>', 'a bug record: store/<system>/<run>/bugs/<id>')
    .option(
      '--repeat <n>',
      `tries per candidate schedule; kept if it reproduces in a majority of them (default ${DEFAULT_REPEAT}; 1 for a bug of a simulated run, whose replay is exact)`,
    )
    .option('--store <dir>', "where the replays are stored (default: the bug's own store)")
    .option('--recorded-plugins', RECORDED_PLUGINS_HELP)
    .option('--json', 'print the result as one JSON document on stdout')
    .option('--verbose', VERBOSE_HELP)
    .option('--fresh', FRESH_HELP)
    .action(async (bugDir: string, flags: ShrinkFlags) => {
      const bug = readBug(bugDir);
      // A simulated bug's replay is the same every try: one try tells.
      const repeat = parseRepeat(flags.repeat ?? (bug.header.simulated !== undefined ? '1' : DEFAULT_REPEAT));
      // A user's module changed since the bug was found: refused before anything runs.
      pluginSources(bug.dir, bug.header.plugins ?? [], flags.recordedPlugins ?? false);
      const h = bug.header;
      const finding = `${h.finding.kind}/${h.finding.name}`;
      process.stderr.write(
        `mallory shrink: ${finding} on ${h.system}, from ${bug.scheduleFile}, ${repeat === 1 ? '1 try (exact)' : `${repeat} tries`} per candidate\n` +
          `  start: ${describeStart(replayStart(bug, flags.fresh ?? false))}\n`,
      );
      const result = await guardCampaigns(({ signal, onRegistry }) =>
        shrinkBug({
          bug,
          repeat,
          store: flags.store ?? bugStore(bug),
          recordedPlugins: flags.recordedPlugins ?? false,
          fresh: flags.fresh ?? false,
          signal,
          reporters: flags.verbose ? [new ProgressReporter()] : [],
          onRegistry,
          onCandidate: (c) => {
            const what = c.index === 0 ? 'the bug as recorded' : `candidate ${c.index}`;
            process.stderr.write(
              `shrink: ${what}, ${c.faults} fault(s): reproduced ${c.reproduced}/${c.tries}` +
                `${c.index === 0 ? '' : c.kept ? ' — kept' : ' — dropped'} (${c.file})\n`,
            );
          },
        }),
      );
      const b = result.before;
      if (flags.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
      else if (result.after && result.shrunk) {
        const a = result.after;
        process.stdout.write(
          `shrunk ${b.faults} → ${a.faults} fault(s); reproduced ${b.reproduced}/${b.tries} before, ${a.reproduced}/${a.tries} after (${finding})\n` +
            `  ${result.shrunk}\n  replay: ${replayCommand(invokedAs(), result.shrunk, bug.header.simulated !== undefined)}\n`,
        );
      } else if (result.after && !result.interrupted) {
        const a = result.after;
        process.stdout.write(
          `not shrunk: the smallest schedule (${a.faults} of ${b.faults} fault(s)) reproduced ${a.reproduced}/${a.tries} in its final check, not a majority (${finding}); no shrunk.jsonl written: the bug's own schedule, ${b.reproduced}/${b.tries}, stays its record\n`,
        );
      } else if (!result.interrupted) {
        process.stdout.write(
          `not shrunk: the bug's own schedule reproduced ${b.reproduced}/${b.tries}, not a majority (${finding}); try a larger --repeat or check it with ${invokedAs()} replay\n`,
        );
      }
      setExit(result.interrupted ? EXIT_INTERRUPTED : result.shrunk !== undefined ? 0 : EXIT_NOT_REPRODUCED);
    });
};
