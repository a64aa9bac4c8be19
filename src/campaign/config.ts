import { z } from 'zod';

import { DURABILITIES, type Durability } from '../check/durability.js';
import { HOST_KEY_CHECKING } from '../cluster/runtime/known-hosts.js';
import {
  DEFAULT_FAULT_FAMILIES,
  FAULT_FAMILIES,
  type FaultFamily,
  TORN_GRANULARITIES,
  type TornGranularity,
} from '../core/fault.js';
import { badFaultTarget } from '../core/fault-targets.js';
import { ReplayOfSchema } from '../store/replay-of.js';
import { DEFAULT_CHECKPOINT_CAP_BYTES, DEFAULT_CHECKPOINT_KEEP } from './checkpoints.js';

/** Defaults in the spirit of the Mallory artifact: 12 steps of 2.5 s per schedule. */
export const DEFAULT_STEPS = 12;
export const DEFAULT_STEP_MS = 2500;
const MAX_PORT = 65_535;
/** The longest wait a timer can make (about 24.8 days): no duration of a run may be longer. */
export const MAX_DURATION_MS = 2_147_483_647;

/** A duration in ms, from 1 ms (0 with `least: 0`) to {@link MAX_DURATION_MS}. */
export function durationMs(least: 0 | 1 = 1): z.ZodNumber {
  const whole = z.number().int();
  return (least === 0 ? whole.nonnegative() : whole.positive()).max(
    MAX_DURATION_MS,
    `must be at most ${MAX_DURATION_MS} ms (about 24 days: a timer waits no longer)`,
  );
}
const DEFAULT_SSH_PORT = 22;

/** The fault families done on SSH hosts (the others are refused on hosts, before the run starts). */
export const HOST_FAULT_FAMILIES = [
  'partition',
  'kill',
  'pause',
  'member',
  'packet',
  'clock',
  'disk',
] as const;
/**
 * The families a run on hosts enables when `--faults` is not given: packet faults are asked for
 * (`--faults …,packet` or `packet:loss`), as delay needs netem in the hosts' kernels, and clock
 * faults (`--faults …,clock`), as they need libfaketime on every host.
 */
export const HOST_DEFAULT_FAULT_FAMILIES = ['partition', 'kill', 'pause', 'member'] as const;
/** The families a run in containers enables when `--faults` is not given (packet faults are asked for). */
export const CONTAINER_DEFAULT_FAULT_FAMILIES = ['partition', 'kill', 'pause'] as const;

/** A simulated disk's storage contracts (`src/sim/disk.ts`): C1 durable at once, C2 at fsync, C3 torn and names at a directory fsync. */
export const SIM_CONTRACTS = ['C1', 'C2', 'C3'] as const;

export const POLICIES = ['adaptive', 'mallory', 'random', 'triggered', 'corpus', 'swarm'] as const;
export type PolicyName = (typeof POLICIES)[number];

/** The one schema of a campaign's configuration: type, defaults and validation. */
export const RunConfigSchema = z.object({
  system: z.string().min(1).default('kvraft'),
  /** Nodes in the cluster; the system's default when absent. */
  nodes: z.number().int().min(1).max(9).optional(),
  timeMs: durationMs().default(60_000),
  seed: z.number().int().nonnegative().optional(),
  policy: z.enum(POLICIES).default('adaptive'),
  faults: z
    .array(z.enum(FAULT_FAMILIES))
    .min(1)
    .default([...DEFAULT_FAULT_FAMILIES]),
  /**
   * The targets some families are kept to (`--faults kill:one,kill:minority`): only faults aimed
   * at them are offered, and a kill or pause never leaves more nodes down at once than the largest
   * of them takes. A family absent takes every target.
   */
  faultTargets: z
    .record(z.array(z.string()).min(1))
    .superRefine((targets, ctx) => {
      for (const [family, chosen] of Object.entries(targets)) {
        const why = (FAULT_FAMILIES as readonly string[]).includes(family)
          ? badFaultTarget(family as FaultFamily, chosen)
          : `unknown fault family "${family}": choose from ${FAULT_FAMILIES.join(', ')}`;
        if (why !== undefined) ctx.addIssue({ code: z.ZodIssueCode.custom, message: why });
      }
    })
    .default({}),
  /**
   * A built-in (`WORKLOADS`: `register`, checked for linearizability per key, `set`, `counter`, the
   * transactional `list-append` and `rw-register`) or the path of a workload module.
   */
  workload: z.string().min(1).default('register'),
  /** Client workers; 2 per node when absent. */
  concurrency: z.number().int().positive().optional(),
  /** Client ops per second across all workers. */
  rate: z.number().positive().default(100),
  opTimeoutMs: durationMs().default(1000),
  bugs: z.array(z.string()).default([]),
  /** The system's settings (`--set NAME=VALUE`); the ones not given take their defaults. */
  settings: z.record(z.string()).default({}),
  /**
   * The durability contract to check (`--durability`), instead of what the system declares: what
   * an acknowledged write must survive.
   */
  durability: z.enum(DURABILITIES as [Durability, ...Durability[]]).optional(),
  /**
   * How finely `torn-write` may cut a write (`--torn-writes`), instead of what the system declares
   * (default `sector`).
   */
  tornWrites: z.enum(TORN_GRANULARITIES as [TornGranularity, ...TornGranularity[]]).optional(),
  /**
   * Fixed fault schedules (JSON lines `{atMs, f, value}`) run instead of a policy: one schedule per
   * file, in order, the cluster carried from one to the next as a campaign carries it.
   */
  schedule: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .transform((s) => (typeof s === 'string' ? [s] : s))
    .optional(),
  /**
   * In a simulated run: the first N schedules are the policy's, as the run a bug came from chose
   * them (its world is deterministic, so they are the same again); the `schedule` files follow, and
   * without any the run ends after the N. How a simulated bug of a later schedule replays exactly.
   */
  prefixSchedules: z.number().int().nonnegative().optional(),
  /**
   * How many of the newest schedules' checkpoints to keep (every node's data dir at the schedule's
   * start), besides those of every schedule a bug was found in; 0 takes none.
   */
  checkpoints: z.number().int().nonnegative().default(DEFAULT_CHECKPOINT_KEEP),
  /** The most the run's checkpoints may hold together (bytes); past it the oldest are dropped. */
  checkpointCapBytes: z.number().int().positive().default(DEFAULT_CHECKPOINT_CAP_BYTES),
  /** A checkpoint dir (`<run>/checkpoints/<schedule>`) the nodes start from, instead of empty data dirs. */
  checkpoint: z.string().optional(),
  store: z.string().default('store'),
  steps: z.number().int().positive().default(DEFAULT_STEPS),
  stepMs: durationMs().default(DEFAULT_STEP_MS),
  network: z.enum(['auto', 'proxy', 'netns']).default('auto'),
  /** Time allowed for the system to serve at all after its nodes first start; the run stops when it does not. */
  startupTimeoutMs: durationMs().default(60_000),
  /**
   * Time allowed for the system to serve again after a reset before it counts as not recovered
   * (`--recovery-timeout`); absent: what the system declares (`SystemAdapter.recoveryTimeoutMs`),
   * else `DEFAULT_RECOVERY_TIMEOUT_MS` (see `recoveryTimeoutMs`).
   */
  recoveryTimeoutMs: durationMs().optional(),
  /**
   * The recovery contract (see recovery-contract.ts): a warm-up measures the fault-free throughput
   * and latency, and after each schedule's recovery the system must get back to them within a bound.
   */
  recoveryContract: z
    .object({
      throughputRatio: z.number().positive().max(1),
      latencyRatio: z.number().min(1),
      withinMs: durationMs(),
      windowMs: durationMs(),
    })
    .strict()
    .optional(),
  /**
   * The workload runs this long on the fault-free cluster before the first schedule (its ops are
   * checked with the first schedule's): histories start with a healthy stretch. The recovery
   * contract's warm-up, when longer, is used instead.
   */
  warmupMs: durationMs(0).default(0),
  /**
   * Jepsen's alternation within a schedule: `faultSteps` steps of faults, then `quietSteps` steps
   * in which every fault is healed and none is injected, again and again. Absent: faults every step.
   */
  pace: z
    .object({ faultSteps: z.number().int().positive(), quietSteps: z.number().int().positive() })
    .strict()
    .optional(),
  /** Linearizability check time limit per schedule. */
  checkTimeLimitMs: durationMs().default(30_000),
  /** End the campaign after the first schedule that found a bug (for time-to-bug measurements). */
  stopOnBug: z.boolean().default(false),
  /** A previous run whose policy values seed this one. */
  seedPolicyFrom: z.string().optional(),
  /** A directory campaigns share what they learn through, while they run (`--exchange`). */
  exchange: z.string().min(1).optional(),
  /** Set by replay and shrink: the bug this run is a try of (`store/replay-of.ts`). */
  replayOf: ReplayOfSchema.optional(),
  /** The nodes on these hosts, one host per node, reached over SSH (`--hosts`); absent: on this machine. */
  hosts: z
    .array(
      z
        .object({
          host: z.string().min(1),
          port: z.number().int().min(1).max(MAX_PORT).optional(),
          username: z.string().min(1).optional(),
          privateKey: z.string().min(1).optional(),
        })
        .strict(),
    )
    .min(1)
    .optional(),
  /** The nodes in containers created from this image, one per node (`--hosts docker:IMAGE`). */
  containers: z
    .object({ image: z.string().min(1) })
    .strict()
    .optional(),
  /** The docker daemon of `containers` (`--docker-host`); else `DOCKER_HOST`, else the client's default. */
  dockerHost: z.string().min(1).optional(),
  /** The SSH user on every host that names none (Jepsen's `--username`). */
  sshUsername: z.string().min(1).default('root'),
  /** The private key for every host that names none (Jepsen's `--ssh-private-key`); the SSH agent when absent. */
  sshPrivateKey: z.string().min(1).optional(),
  sshPort: z.number().int().min(1).max(MAX_PORT).default(DEFAULT_SSH_PORT),
  /** Jepsen's `--strict-host-key-checking`, with OpenSSH's values: `yes`, `accept-new` (on first use), `no`. */
  strictHostKeyChecking: z.enum(HOST_KEY_CHECKING).default('yes'),
  /** The known_hosts file host keys are checked against (default `~/.ssh/known_hosts`). */
  knownHosts: z.string().min(1).optional(),
  /**
   * Runs the nodes in a simulated world in this process, on virtual time (`--sim`): kvraft only;
   * `contract` is what its disks keep at a crash (`--sim-contract`, default C2).
   */
  sim: z.object({ contract: z.enum(SIM_CONTRACTS).default('C2') }).optional(),
});

export type RunConfig = z.infer<typeof RunConfigSchema>;
