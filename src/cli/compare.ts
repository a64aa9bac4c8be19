import { Option } from 'commander';

import { comparePolicies, mergeComparisons, parseArm } from '../campaign/compare.js';
import { STOP_SIGNALS, StopSignal } from '../campaign/stop-signal.js';
import type { Reporter } from '../campaign/reporter.js';
import { DURABILITIES } from '../check/durability.js';
import { UsageError } from '../core/errors.js';
import { DEFAULT_FAULT_FAMILIES, FAULT_FAMILIES } from '../core/fault.js';
import { refuseSimSides } from '../campaign/sim-sides.js';
import { compareTable } from './_internals/compare-table.js';
import type { RegisterCommand } from './command.js';
import {
  collect,
  configFromFlags,
  DURABILITY_HELP,
  SET_HELP,
  SIM_CONTRACT_HELP,
  SIM_HELP,
  SYSTEM_HELP,
  WORKLOAD_HELP,
} from './run.js';
import { SIM_CONTRACTS } from '../campaign/config.js';

interface CompareFlags {
  system: string;
  policies: string;
  runs: string;
  time: string;
  seed?: string;
  nodes?: string;
  faults: string;
  workload: string;
  bug: string[];
  set: string[];
  durability?: string;
  store: string;
  stopOnBug?: boolean;
  from?: string[];
  json?: boolean;
  sim?: boolean;
  simContract?: string;
}

export const registerCompare: RegisterCommand = (program, setExit) => {
  program
    .command('compare')
    .description('run policies side by side (same system, budget and seeds) and compare coverage and bugs')
    .option('--system <name|path>', SYSTEM_HELP, 'kvraft')
    .option(
      '--policies <list>',
      'policies to compare; POLICY+FAMILY adds fault families to --faults for that side (adaptive,adaptive+disk)',
      'adaptive,random',
    )
    .option('--runs <n>', 'runs per policy', '5')
    .option('--time <duration>', 'time budget per run', '10m')
    .option('--seed <n>', 'first seed (run i uses seed + i, the same for every policy)')
    .option('--nodes <n>', 'cluster size')
    .option(
      '--faults <list>',
      `fault families: ${FAULT_FAMILIES.join(',')}`,
      DEFAULT_FAULT_FAMILIES.join(','),
    )
    .option('--workload <name|path>', `every run's ${WORKLOAD_HELP}`, 'register')
    .option(
      '--bug <name>',
      'switch on a known bug (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--set <name=value>', SET_HELP, collect, [])
    .addOption(new Option('--durability <level>', DURABILITY_HELP).choices(DURABILITIES))
    .option('--store <dir>', 'where runs are stored', 'store')
    .option(
      '--stop-on-bug',
      'end each campaign at its first bug (time-to-bug runs; coverage is then not compared)',
    )
    .option(
      '--from <dir>',
      'do not run: merge earlier comparisons (their directories or compare.json files, repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--sim', `every campaign ${SIM_HELP}`)
    .addOption(new Option('--sim-contract <contract>', SIM_CONTRACT_HELP).choices(SIM_CONTRACTS))
    .option('--json', 'print the result as one JSON document on stdout')
    .action(async (flags: CompareFlags) => {
      if (flags.from !== undefined && flags.from.length > 0) {
        const merged = mergeComparisons(flags.from, flags.store);
        process.stdout.write(
          flags.json ? JSON.stringify(merged, null, 2) + '\n' : compareTable(merged) + '\n',
        );
        setExit(0);
        return;
      }
      const arms = flags.policies.split(',').map(parseArm);
      if (arms.length < 2)
        throw new UsageError(
          'bad-flag',
          '--policies needs at least two policies (or policy+families), e.g. adaptive,random or adaptive,adaptive+disk',
        );
      const names = arms.map((a) => a.name);
      const twice = names.find((n, i) => names.indexOf(n) !== i);
      if (twice !== undefined) throw new UsageError('bad-flag', `--policies: "${twice}" is listed twice`);
      const runs = Number(flags.runs);
      if (!Number.isInteger(runs) || runs < 1)
        throw new UsageError('bad-flag', `--runs needs a whole number ≥ 1, got "${flags.runs}"`);
      const base = configFromFlags({
        system: flags.system,
        time: flags.time,
        policy: 'random',
        faults: flags.faults,
        workload: flags.workload,
        bug: flags.bug,
        set: flags.set,
        ...(flags.durability !== undefined ? { durability: flags.durability } : {}),
        store: flags.store,
        network: 'auto',
        stopOnBug: flags.stopOnBug === true,
        ...(flags.nodes !== undefined ? { nodes: flags.nodes } : {}),
        ...(flags.sim !== undefined ? { sim: flags.sim } : {}),
        ...(flags.simContract !== undefined ? { simContract: flags.simContract } : {}),
      });
      await refuseSimSides(base);
      const controller = new AbortController();
      // Says which signal, as `mallory run` does: node exits it caused too (Ctrl-C reaches the
      // whole process group) are then no crash (campaign/stop-signal.ts).
      const onSignal = (signal: NodeJS.Signals): void => {
        controller.abort(new StopSignal(signal));
      };
      for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
      const reporter: Reporter = {};
      try {
        const total = runs * arms.length;
        process.stderr.write(
          `compare: ${total} campaigns of ${flags.time} each on ${base.system}, workload ${base.workload}${base.sim ? `, in the simulator (disks ${base.sim.contract})` : ''}\n`,
        );
        const result = await comparePolicies({
          base,
          arms,
          runs,
          seed: flags.seed === undefined ? Math.floor(Math.random() * 2 ** 30) : Number(flags.seed),
          signal: controller.signal,
          reporter,
          // Named by its side (`adaptive+disk`), not only its policy.
          onRun: (arm, _run, s) => {
            process.stderr.write(
              `compare: ${arm} seed ${s.seed}: ${s.status}, ${s.metrics.states_causal ?? 0} states, ${s.bugs.length} bugs (${s.runDir})\n`,
            );
          },
        });
        process.stdout.write(
          flags.json ? JSON.stringify(result, null, 2) + '\n' : compareTable(result) + '\n',
        );
        setExit(controller.signal.aborted ? 130 : 0);
      } finally {
        for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
      }
    });
};
