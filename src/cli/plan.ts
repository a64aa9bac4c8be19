import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { Option } from 'commander';

import { parseArm } from '../campaign/compare.js';
import { type RunConfig, SIM_CONTRACTS } from '../campaign/config.js';
import { refuseSimSides } from '../campaign/sim-sides.js';
import { DURABILITIES } from '../check/durability.js';
import { UsageError } from '../core/errors.js';
import { DEFAULT_FAULT_FAMILIES, FAULT_FAMILIES } from '../core/fault.js';
import { checkRequests, jobManifest, K8S_DEFAULT_CPU, K8S_DEFAULT_MEMORY } from '../fleet/k8s.js';
import { buildPlan, defaultPlanFile, writePlan } from '../fleet/plan.js';
import { isSystemPath, loadSystem } from '../systems/load-system.js';
import { invokedAs } from './_internals/invoked-as.js';
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
import { WORKLOADS } from '../workload/workload.js';

interface PlanFlags {
  system: string;
  policies: string;
  seeds: string;
  seed?: string;
  time: string;
  nodes?: string;
  faults: string;
  workload: string;
  bug: string[];
  eachBug?: string;
  set: string[];
  durability?: string;
  stopOnBug?: boolean;
  store: string;
  id?: string;
  out?: string;
  exchange?: boolean;
  k8s?: boolean;
  image?: string;
  parallelism?: string;
  storeClaim?: string;
  namespace?: string;
  cpu?: string;
  memory?: string;
  network: 'auto' | 'proxy' | 'netns';
  json?: boolean;
  sim?: boolean;
  simContract?: string;
}

/** The manifest's file, beside the plan. */
export const JOB_FILE = 'job.json';

function wholeNumber(flag: string, text: string, least: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < least) {
    throw new UsageError('bad-flag', `${flag} needs a whole number ≥ ${least}, got "${text}"`);
  }
  return n;
}

/** A module path in a plan is absolute: a worker may start in another directory. */
function absoluteIfPath(spec: string, builtIns: readonly string[]): string {
  return builtIns.includes(spec) || !isSystemPath(spec) ? spec : resolve(spec);
}

export const registerPlan: RegisterCommand = (program, setExit) => {
  program
    .command('plan')
    .description(
      'write a fleet plan: campaigns by index (policies × seeds, per bug switch with --each-bug), for `run --plan`, `fleet run` or a Kubernetes Indexed Job (--k8s)',
    )
    .option('--system <name|path>', SYSTEM_HELP, 'kvraft')
    .option(
      '--policies <list>',
      'the sides to compare; POLICY+FAMILY adds fault families to --faults for that side (adaptive,adaptive+disk); POLICY+exchange makes its campaigns share what they learn',
      'adaptive,random',
    )
    .option('--seeds <n>', 'campaigns per policy (and per bug switch): seed, seed+1, …', '5')
    .option('--seed <n>', 'the first seed (default: a random one, written in the plan)')
    .option('--time <duration>', 'time budget of each campaign', '10m')
    .option('--nodes <n>', 'cluster size')
    .option(
      '--faults <list>',
      `fault families: ${FAULT_FAMILIES.join(',')}`,
      DEFAULT_FAULT_FAMILIES.join(','),
    )
    .option('--workload <name|path>', `every campaign's ${WORKLOAD_HELP}`, 'register')
    .option('--bug <name>', 'switch on a known bug in every campaign (repeatable)', collect, [])
    .option(
      '--each-bug <list>',
      'one comparison per bug switch, each campaign with that one switched on (e.g. ack-before-commit,stale-read)',
    )
    .option('--set <name=value>', SET_HELP, collect, [])
    .addOption(new Option('--durability <level>', DURABILITY_HELP).choices(DURABILITIES))
    .option('--stop-on-bug', 'end each campaign at its first bug (time-to-bug plans)')
    .option('--store <dir>', 'where every worker writes its run (a volume all workers share)', 'store')
    .option(
      '--exchange',
      'every campaign shares what it learns with the others of its comparison and policy while they run (a side written POLICY+exchange shares on its own)',
    )
    .option('--id <name>', "the plan's name (default: the system and the time)")
    .option('--out <file>', 'where to write the plan (default: <store>/plans/<id>/plan.json)')
    .option(
      '--k8s',
      `also write a Kubernetes Indexed Job (batch/v1) that runs the plan: ${JOB_FILE} beside it`,
    )
    .option(
      '--image <image>',
      "with --k8s: the workers' image (mallory on its PATH, the system's binaries installed)",
    )
    .option('--parallelism <n>', 'with --k8s: workers at once', '2')
    .option(
      '--store-claim <name>',
      'with --k8s: the PersistentVolumeClaim holding the store',
      'mallory-store',
    )
    .option('--namespace <ns>', "with --k8s: the Job's namespace")
    .option('--cpu <quantity>', `with --k8s: each worker's CPU request (default ${K8S_DEFAULT_CPU})`)
    .option('--memory <quantity>', `with --k8s: each worker's memory request (default ${K8S_DEFAULT_MEMORY})`)
    .addOption(
      new Option('--network <kind>', "the campaigns' network backend (with --k8s: proxy needs no privilege)")
        .choices(['auto', 'proxy', 'netns'])
        .default('auto'),
    )
    .option('--sim', `every campaign ${SIM_HELP}: workers run N at a time, one core each`)
    .addOption(new Option('--sim-contract <contract>', SIM_CONTRACT_HELP).choices(SIM_CONTRACTS))
    .option('--json', 'print the plan as one JSON document on stdout')
    .action(async (flags: PlanFlags) => {
      const arms = flags.policies.split(',').map(parseArm);
      const names = arms.map((a) => a.name);
      const twice = names.find((n, i) => names.indexOf(n) !== i);
      if (twice !== undefined) throw new UsageError('bad-flag', `--policies: "${twice}" is listed twice`);
      const seeds = wholeNumber('--seeds', flags.seeds, 1);
      const seed =
        flags.seed === undefined ? Math.floor(Math.random() * 2 ** 30) : wholeNumber('--seed', flags.seed, 0);
      if (flags.k8s !== true && flags.image !== undefined) {
        throw new UsageError('bad-flag', '--image is for --k8s: add --k8s to write the Job manifest');
      }
      for (const [flag, value] of [
        ['--cpu', flags.cpu],
        ['--memory', flags.memory],
      ] as const) {
        if (flags.k8s !== true && value !== undefined) {
          throw new UsageError('bad-flag', `${flag} is for --k8s: add --k8s to write the Job manifest`);
        }
      }
      checkRequests(flags.cpu ?? K8S_DEFAULT_CPU, flags.memory ?? K8S_DEFAULT_MEMORY);
      if (flags.k8s === true && flags.image === undefined) {
        throw new UsageError(
          'bad-flag',
          "--k8s needs --image IMAGE: the workers' image, with mallory and the system's binaries",
        );
      }
      const base: RunConfig = configFromFlags({
        system: absoluteIfPath(flags.system, []),
        time: flags.time,
        policy: 'random',
        faults: flags.faults,
        workload: absoluteIfPath(flags.workload, WORKLOADS),
        bug: flags.bug,
        set: flags.set,
        ...(flags.durability !== undefined ? { durability: flags.durability } : {}),
        store: flags.store,
        network: flags.network,
        stopOnBug: flags.stopOnBug === true,
        ...(flags.nodes !== undefined ? { nodes: flags.nodes } : {}),
        ...(flags.sim !== undefined ? { sim: flags.sim } : {}),
        ...(flags.simContract !== undefined ? { simContract: flags.simContract } : {}),
      });
      await refuseSimSides(base);
      const eachBug = flags.eachBug
        ?.split(',')
        .map((b) => b.trim())
        .filter((b) => b !== '');
      // A plan that names an unknown system or bug is refused now, not by every worker later.
      const { definition } = await loadSystem(base.system);
      for (const bug of [...base.bugs, ...(eachBug ?? [])]) {
        if (!definition.bugs.includes(bug)) {
          throw new UsageError(
            'bad-flag',
            `unknown bug "${bug}" for ${definition.name}: choose from ${definition.bugs.join(', ') || '(it has none)'}`,
          );
        }
      }
      const data = buildPlan(
        {
          base,
          arms,
          seeds,
          seed,
          ...(eachBug !== undefined ? { eachBug } : {}),
          ...(flags.id !== undefined ? { id: flags.id } : {}),
          exchange: flags.exchange === true,
        },
        base.store,
      );
      const plan = writePlan(data, flags.out ?? defaultPlanFile(base.store, data.id));
      let jobFile: string | undefined;
      if (flags.k8s === true) {
        const manifest = jobManifest(plan, {
          image: flags.image!,
          parallelism: wholeNumber('--parallelism', flags.parallelism ?? '2', 1),
          storeClaim: flags.storeClaim ?? 'mallory-store',
          ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
          ...(flags.cpu !== undefined ? { cpu: flags.cpu } : {}),
          ...(flags.memory !== undefined ? { memory: flags.memory } : {}),
        });
        jobFile = join(dirname(plan.file), JOB_FILE);
        writeFileSync(jobFile, JSON.stringify(manifest, null, 2) + '\n');
      }
      if (flags.json) {
        process.stdout.write(
          JSON.stringify({ ...data, file: plan.file, ...(jobFile ? { job: jobFile } : {}) }, null, 2) + '\n',
        );
      } else {
        const me = invokedAs();
        const n = plan.campaigns.length;
        process.stdout.write(
          [
            `plan ${plan.id}: ${n} campaign${n === 1 ? '' : 's'} of ${flags.time} on ${definition.name}${base.sim ? ` in the simulator (disks ${base.sim.contract})` : ''} (${names.join(', ')} × ${seeds} seeds from ${seed}${eachBug ? ` × ${eachBug.length} bug switches` : ''})`,
            `  ${plan.file}`,
            `run them here:        ${me} fleet run ${plan.file} --workers 2`,
            `or one per worker:    ${me} run --plan ${plan.file} --index N   (N = 0 … ${n - 1}, or JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID)`,
            `as a Slurm job array: sbatch --array=0-${n - 1} mallory-array.sbatch ${plan.file}   (the script: Mallory's examples/slurm/)`,
            ...(jobFile ? [`on Kubernetes:        kubectl apply -f ${jobFile}`] : []),
            `progress and results: ${me} fleet status ${plan.file}; ${me} fleet report ${plan.file}`,
          ].join('\n') + '\n',
        );
      }
      setExit(0);
    });
};
