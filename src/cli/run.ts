import { parseByteSize } from '../core/memory-limit.js';
import { resolve } from 'node:path';

import { type Command, Option } from 'commander';

import {
  CONTAINER_DEFAULT_FAULT_FAMILIES,
  HOST_DEFAULT_FAULT_FAMILIES,
  POLICIES,
  SIM_CONTRACTS,
  type RunConfig,
  RunConfigSchema,
} from '../campaign/config.js';
import { isContainerHosts, parseContainerHosts } from '../cluster/runtime/containers-spec.js';
import { parseHosts } from '../cluster/runtime/hosts-spec.js';
import type { Reporter } from '../campaign/reporter.js';
import { DEFAULT_RECOVERY_CONTRACT, type RecoveryContract } from '../campaign/recovery-contract.js';
import { runCampaign } from '../campaign/run-campaign.js';
import { parseDurationMs } from '../core/clock.js';
import { DURABILITIES } from '../check/durability.js';
import { SECTOR_BYTES, TORN_GRANULARITIES } from '../core/fault.js';
import { UsageError } from '../core/errors.js';
import { parseSetFlags } from '../systems/settings.js';
import { DEFAULT_FAULT_FAMILIES, FAULT_FAMILIES } from '../core/fault.js';
import { campaignExitCode } from './_internals/campaign-exit.js';
import { guardCampaigns } from './campaign-guard.js';
import type { RegisterCommand } from './command.js';
import { ConsoleLogReporter } from './console-log-reporter.js';
import { ProgressReporter } from './progress-reporter.js';
import { systemsHelp } from './_internals/systems-help.js';
import { WORKLOADS } from '../workload/workload.js';
import { addHostOptions } from './_internals/host-options.js';
import { runPlanWorker } from './_internals/plan-worker.js';
import { parseFaultsFlag } from './_internals/faults-flag.js';

/** What `--system` takes, for every command that has it. */
export const SYSTEM_HELP =
  'system under test: a built-in (kvraft, etcd, redis, dqlite, dqlite-app) or the path of a module exporting a SystemDefinition (.js, .ts, or a package directory)';

export interface RunFlags {
  system: string;
  nodes?: string;
  time: string;
  seed?: string;
  policy: string;
  faults: string;
  workload: string;
  concurrency?: string;
  rate?: string;
  bug: string[];
  set?: string[];
  durability?: string;
  tornWrites?: string;
  schedule?: string[];
  checkpoints?: string;
  checkpointCap?: string;
  fromCheckpoint?: string;
  store: string;
  steps?: string;
  step?: string;
  network: string;
  stopOnBug?: boolean;
  seedFrom?: string;
  recoveryContract?: string | boolean;
  warmup?: string;
  pace?: string;
  recoveryTimeout?: string;
  startupTimeout?: string;
  json?: boolean;
  plan?: string;
  index?: string;
  exchange?: string;
  hosts?: string;
  username?: string;
  sshPrivateKey?: string;
  sshPort?: string;
  strictHostKeyChecking?: string;
  knownHosts?: string;
  dockerHost?: string;
  sim?: boolean;
  simContract?: string;
}

function int(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new UsageError('bad-flag', `--${name} needs a whole number, got "${text}"`);
  return n;
}

/** `--nodes N`; Jepsen's `--nodes n1,n2,n3` (host names) is said to be `--hosts` here. */
function nodeCount(text: string | undefined): string | undefined {
  if (text !== undefined && /[^\d\s]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text.trim())) {
    throw new UsageError(
      'bad-flag',
      `--nodes takes how many nodes (they are named n1 … nN), got "${text}": to run the nodes on hosts, give them to --hosts (--hosts ${text}, or --hosts FILE with one host a line)`,
    );
  }
  return text;
}

function byteSize(name: string, text: string): number {
  try {
    return parseByteSize(text);
  } catch {
    throw new UsageError('bad-flag', `--${name} needs a size such as 500m or 2g, got "${text}"`);
  }
}

function duration(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDurationMs(text);
  } catch (e) {
    throw new UsageError('bad-flag', `--${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The flag that sets a config field, where the two names differ (errors name the flag). */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  timeMs: 'time',
  faultTargets: 'faults',
  stepMs: 'step',
  bugs: 'bug',
  stopOnBug: 'stop-on-bug',
  seedPolicyFrom: 'seed-from',
  exchange: 'exchange',
  recoveryContract: 'recovery-contract',
  settings: 'set',
  warmupMs: 'warmup',
  recoveryTimeoutMs: 'recovery-timeout',
  startupTimeoutMs: 'startup-timeout',
  checkpointCapBytes: 'checkpoint-cap',
  checkpoint: 'from-checkpoint',
  sshUsername: 'username',
  sshPrivateKey: 'ssh-private-key',
  sshPort: 'ssh-port',
  strictHostKeyChecking: 'strict-host-key-checking',
  knownHosts: 'known-hosts',
};

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** What `--workload` takes, for run and compare. */
export const WORKLOAD_HELP = `client workload: a built-in (${WORKLOADS.join(', ')}: register checked for linearizability per key, set for lost and unexpected elements, counter for reads within the adds around them, bank for reads that conserve the total, transactions for anomalies) or the path of a module exporting a WorkloadDefinition with its checker (.js, .ts, or a package directory)`;

/** `--sim`, as run, compare and plan take it (after "run" or "every campaign"). */
export const SIM_HELP =
  "runs kvraft's nodes in a simulated world in one process, on virtual time: deterministic for a seed (unless it shares through --exchange), far faster than real time (no checkpoints, no slow-disk)";

/** `--sim-contract`, as run, compare and plan take it. */
export const SIM_CONTRACT_HELP =
  'with --sim: what the simulated disks keep at a crash: C1 every write at once, C2 only what was fsynced (default), C3 as C2 with torn unsynced writes and names durable at a directory fsync';

/** `--set NAME=VALUE` (repeatable), as run, compare and replay take it. */
export const SET_HELP =
  "a system setting, e.g. --set appendfsync=always for redis (repeatable; a system's settings are listed when a name is wrong)";

/** `--durability`, as run, compare and replay take it. */
export const DURABILITY_HELP =
  'the durability contract to check instead of what the system declares: what an acknowledged write must survive';

/** Collects a repeatable flag's values. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * `--recovery-contract [throughput=0.8,latency=3,within=20s,window=2s]`: the bounds of the recovery
 * contract, each optional (the defaults fill in).
 */
export function parseRecoveryContract(spec: string | boolean | undefined): RecoveryContract | undefined {
  if (spec === undefined || spec === false) return undefined;
  if (spec === true || spec === '') return DEFAULT_RECOVERY_CONTRACT;
  const contract: { -readonly [K in keyof RecoveryContract]: RecoveryContract[K] } = {
    ...DEFAULT_RECOVERY_CONTRACT,
  };
  for (const part of spec.split(',')) {
    const [name, text = ''] = part.split('=').map((x) => x.trim());
    const bad = (why: string): UsageError =>
      new UsageError(
        'bad-flag',
        `--recovery-contract: ${why} in "${part}": write e.g. throughput=0.8,latency=3,within=20s,window=2s`,
      );
    if (name === 'throughput' || name === 'latency') {
      const n = Number(text);
      if (!Number.isFinite(n) || n <= 0) throw bad('not a positive number');
      if (name === 'throughput') contract.throughputRatio = n;
      else contract.latencyRatio = n;
    } else if (name === 'within' || name === 'window') {
      const ms = duration('recovery-contract', text);
      if (ms === undefined) throw bad('no duration');
      if (name === 'within') contract.withinMs = ms;
      else contract.windowMs = ms;
    } else throw bad(`unknown bound "${name}"`);
  }
  return contract;
}

/** `--pace F:Q`: F steps of faults, then Q quiet steps (every fault healed), in turn. */
export function parsePace(spec: string | undefined): { faultSteps: number; quietSteps: number } | undefined {
  if (spec === undefined) return undefined;
  const m = /^(\d+):(\d+)$/.exec(spec.trim());
  const faultSteps = m ? Number(m[1]) : 0;
  const quietSteps = m ? Number(m[2]) : 0;
  if (faultSteps < 1 || quietSteps < 1) {
    throw new UsageError(
      'bad-flag',
      `--pace: "${spec}" is not FAULT_STEPS:QUIET_STEPS with both at least 1, e.g. --pace 4:2`,
    );
  }
  return { faultSteps, quietSteps };
}

/** Flags → the one config schema (which supplies every default and validates). */
export function configFromFlags(flags: RunFlags): RunConfig {
  const { faults, faultTargets } = parseFaultsFlag(flags.faults);
  const raw = {
    system: flags.system,
    nodes: int('nodes', nodeCount(flags.nodes)),
    timeMs: duration('time', flags.time),
    seed: int('seed', flags.seed),
    policy: flags.policy,
    faults,
    faultTargets,
    workload: flags.workload,
    concurrency: int('concurrency', flags.concurrency),
    rate: flags.rate === undefined ? undefined : Number(flags.rate),
    bugs: flags.bug,
    settings: parseSetFlags(flags.set ?? []),
    durability: flags.durability,
    tornWrites: flags.tornWrites,
    schedule: flags.schedule !== undefined && flags.schedule.length > 0 ? flags.schedule : undefined,
    checkpoints: int('checkpoints', flags.checkpoints),
    checkpointCapBytes:
      flags.checkpointCap === undefined ? undefined : byteSize('checkpoint-cap', flags.checkpointCap),
    checkpoint: flags.fromCheckpoint,
    store: flags.store,
    steps: int('steps', flags.steps),
    stepMs: duration('step', flags.step),
    network: flags.network,
    stopOnBug: flags.stopOnBug,
    seedPolicyFrom: flags.seedFrom,
    exchange: flags.exchange === undefined ? undefined : resolve(flags.exchange),
    recoveryContract: parseRecoveryContract(flags.recoveryContract),
    warmupMs: duration('warmup', flags.warmup),
    pace: parsePace(flags.pace),
    recoveryTimeoutMs: duration('recovery-timeout', flags.recoveryTimeout),
    startupTimeoutMs: duration('startup-timeout', flags.startupTimeout),
    hosts:
      flags.hosts === undefined || isContainerHosts(flags.hosts)
        ? undefined
        : parseHosts(flags.hosts).map(withoutUndefined),
    containers:
      flags.hosts !== undefined && isContainerHosts(flags.hosts)
        ? parseContainerHosts(flags.hosts)
        : undefined,
    dockerHost: flags.dockerHost,
    sshUsername: flags.username,
    sshPrivateKey: flags.sshPrivateKey,
    sshPort: int('ssh-port', flags.sshPort),
    strictHostKeyChecking: flags.strictHostKeyChecking,
    knownHosts: flags.knownHosts,
    sim: flags.sim === true ? { contract: flags.simContract } : undefined,
  };
  if (flags.simContract !== undefined && flags.sim !== true) {
    throw new UsageError('bad-flag', '--sim-contract is a setting of the simulated disk: add --sim');
  }
  if (raw.exchange !== undefined && raw.schedule !== undefined) {
    throw new UsageError(
      'bad-flag',
      '--exchange needs a policy that learns: a run of fixed --schedule files has nothing to share',
    );
  }
  const parsed = RunConfigSchema.safeParse(
    Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)),
  );
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue.path[0]);
    throw new UsageError('bad-flag', `--${FLAG_OF_FIELD[field] ?? field}: ${issue.message}`);
  }
  return parsed.data;
}

export const registerRun: RegisterCommand = (program, setExit) => {
  const runCommand = program
    .command('run')
    .addHelpText('after', systemsHelp())
    .description('run a fuzzing campaign against a system')
    .option('--system <name|path>', SYSTEM_HELP, 'kvraft')
    .option('--nodes <n>', 'cluster size (default: the system’s)')
    .option('--time <duration>', 'time budget, e.g. 60s or 10m', '60s')
    .option('--seed <n>', 'random seed (printed, and stored with every bug)')
    .addOption(new Option('--policy <name>', 'fault policy').choices(POLICIES).default('adaptive'))
    .option(
      '--faults <list>',
      `fault families: ${FAULT_FAMILIES.join(',')}; FAMILY:TARGET keeps a family to some targets (kill:one,kill:minority; packet:loss keeps packet faults to loss)`,
      DEFAULT_FAULT_FAMILIES.join(','),
    )
    .option('--workload <name|path>', WORKLOAD_HELP, 'register')
    .option('--concurrency <n>', 'client workers (default 2 per node)')
    .option('--rate <ops/s>', 'client ops per second in total (default 100)')
    .option(
      '--bug <name>',
      'switch on a known bug of the system (repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--set <name=value>', SET_HELP, collect, [])
    .addOption(new Option('--durability <level>', DURABILITY_HELP).choices(DURABILITIES))
    .addOption(
      new Option(
        '--torn-writes <granularity>',
        `how finely a torn-write fault cuts a write: sector (whole ${SECTOR_BYTES}-byte sectors, the contract most write-ahead logs assume) or byte (splits a sector, for a system that tolerates it) (default: what the system declares, else sector)`,
      ).choices(TORN_GRANULARITIES),
    )
    .option(
      '--schedule <file>',
      'run this fault schedule (JSON lines {atMs, f, value}) instead of a policy; repeat it for a campaign of fixed schedules, one per file, in order',
      collect,
      [],
    )
    .option(
      '--checkpoints <n>',
      "keep the checkpoints (every node's data dir at a schedule's start, for replay) of the newest N schedules, besides every bug's; 0 takes none (default 2)",
    )
    .option(
      '--checkpoint-cap <size>',
      'the most all checkpoints of the run may hold, e.g. 500m, 4g (default 2g)',
    )
    .option(
      '--from-checkpoint <dir>',
      "start the nodes on a checkpoint's data dirs (<run>/checkpoints/<schedule>) instead of empty ones",
    )
    .option('--store <dir>', 'where runs are stored', 'store')
    .option('--steps <n>', 'steps per schedule (default 12)')
    .option('--step <duration>', 'length of a step (default 2.5s)')
    .option(
      '--recovery-timeout <duration>',
      'how long the system may take to serve again after a schedule is healed (default 30s, or what the system declares: redis 45s; half as long again tells late from never)',
    )
    .option(
      '--startup-timeout <duration>',
      'how long the system may take to serve at all once its nodes first start (default 60s); the run stops when it does not',
    )
    .addOption(
      new Option('--network <kind>', 'network backend').choices(['auto', 'proxy', 'netns']).default('auto'),
    )
    .option('--stop-on-bug', 'end the campaign after the first schedule that finds a bug')
    .option(
      '--seed-from <run-dir>',
      'start from what an earlier run (same system and policy) learnt: its policy values and the states it saw',
    )
    .option(
      '--exchange <dir>',
      'share what the policy learns with the other campaigns that use this directory, while they run (values merged by visits, states, log templates by text)',
    )
    .option(
      '--recovery-contract [bounds]',
      'after each schedule, the system must get back to its warm-up throughput and latency (default throughput=0.8,latency=3,within=20s,window=2s)',
    )
    .option(
      '--warmup <duration>',
      'run the workload this long with no fault before the first schedule (default 0)',
    )
    .option(
      '--pace <faults:quiet>',
      "Jepsen's alternation: N steps of faults, then M quiet steps with every fault healed, in turn (e.g. 4:2)",
    )
    .option('--sim', `the campaign ${SIM_HELP}`)
    .addOption(new Option('--sim-contract <contract>', SIM_CONTRACT_HELP).choices(SIM_CONTRACTS));
  addHostOptions(runCommand, {
    hostsHelp:
      'run the nodes on these hosts over SSH, one host per node: a file (one [user@]host[:port] a line) or h1,h2,h3; docker:IMAGE: in containers of IMAGE, one per node',
    afterHosts: (c) =>
      c.option(
        '--docker-host <address>',
        'with --hosts docker:IMAGE: the docker daemon (default: DOCKER_HOST, else the client default)',
      ),
  })
    .option('--json', 'print the summary as one JSON document on stdout')
    .option(
      '--plan <file>',
      "run one campaign of a fleet's plan (written by `mallory plan`) as a batch worker; every other setting comes from the plan",
    )
    .option(
      '--index <n>',
      'with --plan: the campaign to run (default: JOB_COMPLETION_INDEX of a Kubernetes Indexed Job, or SLURM_ARRAY_TASK_ID)',
    )
    .action(async (flags: RunFlags, command: Command) => {
      if (flags.plan !== undefined) {
        await runPlanWorker(flags.plan, flags.index, flags.json === true, command, setExit);
        return;
      }
      if (flags.index !== undefined) {
        throw new UsageError('bad-flag', '--index needs --plan FILE: the plan whose campaign to run');
      }
      if (flags.hosts !== undefined) {
        // On hosts the defaults are what is done there: the faults done over SSH; in containers no
        // checkpoints (not taken there yet).
        if (command.getOptionValueSource('faults') === 'default')
          flags.faults = (
            isContainerHosts(flags.hosts) ? CONTAINER_DEFAULT_FAULT_FAMILIES : HOST_DEFAULT_FAULT_FAMILIES
          ).join(',');
        if (isContainerHosts(flags.hosts)) flags.checkpoints ??= '0';
      }
      const config = configFromFlags(flags);
      const reporters: Reporter[] = [new ProgressReporter(), new ConsoleLogReporter()];
      await guardCampaigns(async ({ signal, onRegistry }) => {
        const summary = await runCampaign(config, { reporters, signal, onRegistry });
        if (flags.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
        setExit(campaignExitCode(summary));
      });
    });
};
