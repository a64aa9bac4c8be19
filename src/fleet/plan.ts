import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

import { z } from 'zod';

import type { CompareArm } from '../campaign/compare.js';
import { durationMs, type RunConfig, RunConfigSchema } from '../campaign/config.js';
import { UsageError } from '../core/errors.js';
import { makeDirs } from '../core/fs.js';
import { timestampName } from '../store/run-store.js';

/**
 * A plan: the campaigns of a fleet, by index. Any engine runs campaign N with
 * `mallory run --plan FILE --index N` (a Kubernetes Indexed Job, a Slurm array, `mallory fleet
 * run`), and every worker writes its run into the plan's store. A plan is one or more
 * comparisons (`group`s: one per bug switch with `--each-bug`), each of policies (`arm`s, as
 * `compare` names them) on the same seeds.
 */
export const PLAN_FORMAT = 'mallory-plan';

const CampaignSchema = z
  .object({
    index: z.number().int().nonnegative(),
    /** The comparison the campaign belongs to: `all` for a plan of one, else e.g. `bug=stale-read`. */
    group: z.string().min(1),
    /** The side of the comparison, as `compare --policies` names it (`adaptive`, `adaptive+disk`). */
    arm: z.string().min(1),
    seed: z.number().int().nonnegative(),
    /**
     * Whether the campaign shares what it learns with the other campaigns of its comparison and
     * side, through `<plan>/exchange/<group>/<arm>/` (`--exchange`, or an arm's `+exchange`).
     */
    exchange: z.boolean().optional(),
    /** The campaign's whole configuration, but its store (the plan's). */
    config: z.record(z.unknown()),
  })
  .strict();

export const PlanSchema = z
  .object({
    format: z.literal(PLAN_FORMAT),
    version: z.literal(1),
    /** Names the plan's folder in the store: `<store>/plans/<id>/`. */
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ - only'),
    created: z.string(),
    /** Where every worker writes its run: absolute, or relative to the plan file's directory. */
    store: z.string().min(1),
    system: z.string().min(1),
    workload: z.string().min(1),
    /** Every campaign's budget: as `--time` takes it (the one config schema's range). */
    timeMs: durationMs(),
    stopOnBug: z.boolean(),
    campaigns: z.array(CampaignSchema).min(1),
  })
  .strict();

export type PlanCampaign = z.infer<typeof CampaignSchema>;
export type PlanData = z.infer<typeof PlanSchema>;

/** A plan read from its file, with the paths it implies resolved. */
export interface Plan extends PlanData {
  /** The plan file, absolute. */
  readonly file: string;
  /** The store, absolute. */
  readonly storeDir: string;
  /** `<store>/plans/<id>/`: the workers' records of each index, the fleet's logs and report. */
  readonly dir: string;
}

/** The group of a plan without `--each-bug`. */
export const ALL_GROUP = 'all';

export const PLANS_DIR = 'plans';

/** The plan's exchange directories, under its folder. */
export const EXCHANGE_DIR = 'exchange';

export interface PlanRequest {
  /** Every campaign's configuration before its policy, faults and seed are set. */
  readonly base: RunConfig;
  readonly arms: readonly CompareArm[];
  /** Seeds per arm (and per group): campaign r of every arm uses `seed + r`. */
  readonly seeds: number;
  readonly seed: number;
  /** One comparison per bug switch (each on its own, besides `base.bugs`); none: one comparison. */
  readonly eachBug?: readonly string[];
  /** Every campaign shares what it learns with the others of its comparison and side. */
  readonly exchange?: boolean;
  readonly id?: string;
}

/**
 * The campaigns of a plan, interleaved as `compare` runs them — per group, per seed, every arm —
 * so a fleet stopped part-way has compared like with like.
 */
export function planCampaigns(request: PlanRequest): PlanCampaign[] {
  const { base, arms, seeds } = request;
  const groups: { name: string; bugs: readonly string[] }[] =
    request.eachBug !== undefined && request.eachBug.length > 0
      ? request.eachBug.map((bug) => ({ name: `bug=${bug}`, bugs: [...new Set([...base.bugs, bug])] }))
      : [{ name: ALL_GROUP, bugs: base.bugs }];
  const campaigns: PlanCampaign[] = [];
  for (const group of groups) {
    for (let r = 0; r < seeds; r++) {
      for (const arm of arms) {
        const seed = request.seed + r;
        const faults = [...new Set([...base.faults, ...arm.addFaults])];
        const config: Record<string, unknown> = {
          ...base,
          policy: arm.policy,
          faults,
          seed,
          bugs: group.bugs,
        };
        // The store is the plan's, wherever a worker mounts it.
        delete config.store;
        const exchange = request.exchange === true || arm.exchange;
        campaigns.push({
          index: campaigns.length,
          group: group.name,
          arm: arm.name,
          seed,
          ...(exchange ? { exchange } : {}),
          config,
        });
      }
    }
  }
  return campaigns;
}

/** The plan a request makes (not yet written). */
export function buildPlan(request: PlanRequest, storeDir: string): PlanData {
  const created = new Date();
  return {
    format: PLAN_FORMAT,
    version: 1,
    id:
      request.id ??
      `${basename(request.base.system)
        .replace(/\.[cm]?[jt]s$/, '')
        .replace(/[^A-Za-z0-9._-]+/g, '-')
        .replace(/^[^A-Za-z0-9]+/, '')}-${timestampName(created)}`,
    created: created.toISOString(),
    store: storeDir,
    system: request.base.system,
    workload: request.base.workload,
    timeMs: request.base.timeMs,
    stopOnBug: request.base.stopOnBug,
    campaigns: planCampaigns(request),
  };
}

/** Where `mallory plan` writes a plan by default: in its folder in the store. */
export function defaultPlanFile(storeDir: string, id: string): string {
  return join(resolve(storeDir), PLANS_DIR, id, 'plan.json');
}

/**
 * Writes a plan file (whole or not at all) and makes its folder in the store. A plan inside its
 * store names the store relative to itself, so the store can be mounted anywhere (a pod's volume).
 */
export function writePlan(data: PlanData, file: string): Plan {
  const checked = PlanSchema.safeParse(data);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue.path.join('.');
    throw new UsageError(
      'bad-flag',
      field === 'id'
        ? `--id "${data.id}": ${issue.message}`
        : `plan: ${field || 'the plan'}: ${issue.message}`,
    );
  }
  const path = resolve(file);
  if (existsSync(path)) {
    throw new UsageError(
      'plan-exists',
      `plan: ${path} exists: give another --out or --id, or remove it first`,
    );
  }
  const storeDir = resolve(data.store);
  const rel = relative(dirname(path), storeDir);
  const inside = !relative(storeDir, path).startsWith('..');
  const plan: PlanData = { ...data, store: inside ? rel || '.' : storeDir };
  const resolved = resolvePlan(plan, path);
  makeDirs(resolved.dir, "plan: the plan's folder in the store,");
  makeDirs(dirname(path), 'plan: --out');
  try {
    const tmp = `${path}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(plan, null, 2) + '\n');
    renameSync(tmp, path);
  } catch (e) {
    throw new UsageError('bad-store', `plan: cannot write ${path} or ${resolved.dir}: ${errorText(e)}`);
  }
  return resolved;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function resolvePlan(data: PlanData, file: string): Plan {
  const storeDir = isAbsolute(data.store) ? data.store : resolve(dirname(file), data.store);
  return { ...data, file, storeDir, dir: join(storeDir, PLANS_DIR, data.id) };
}

/** Reads and checks a plan file; anything wrong is a one-line `UsageError` naming the file. */
export function readPlan(file: string): Plan {
  const path = resolve(file);
  if (!existsSync(path)) {
    throw new UsageError('bad-plan', `--plan: ${path} does not exist: write one with \`mallory plan\``);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UsageError('bad-plan', `--plan: ${path} is not JSON (${errorText(e)})`);
  }
  const parsed = PlanSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      'bad-plan',
      `--plan: ${path} is not a plan written by \`mallory plan\`: ${issue.path.join('.') || 'the file'}: ${issue.message}`,
    );
  }
  const data = parsed.data;
  data.campaigns.forEach((c, i) => {
    if (c.index !== i) {
      throw new UsageError(
        'bad-plan',
        `--plan: ${path}: campaign ${i} is numbered ${c.index}: indices run 0, 1, 2, …`,
      );
    }
    const { seed, timeMs } = c.config;
    if (seed !== undefined && seed !== c.seed) {
      throw new UsageError(
        'bad-plan',
        `--plan: ${path}: campaign ${i} has seed ${c.seed} but config.seed ${JSON.stringify(seed)}: make them the same (the run would use config.seed)`,
      );
    }
    if (timeMs !== undefined && timeMs !== data.timeMs) {
      throw new UsageError(
        'bad-plan',
        `--plan: ${path}: campaign ${i} has config.timeMs ${JSON.stringify(timeMs)} but the plan's timeMs is ${data.timeMs}: make them the same (the report measures every campaign on the plan's)`,
      );
    }
  });
  const plan = resolvePlan(data, path);
  // Every campaign's settings are checked now, as the flags are, not by each worker later.
  for (const c of plan.campaigns) campaignConfig(plan, c.index);
  return plan;
}

/**
 * The index a worker runs: `--index`, else the engine's (`JOB_COMPLETION_INDEX` of a Kubernetes
 * Indexed Job, `SLURM_ARRAY_TASK_ID` of a Slurm array), checked against the plan.
 */
export function workerIndex(
  plan: Plan,
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const sources: [string, string | undefined][] = [
    ['--index', flag],
    ['JOB_COMPLETION_INDEX', env.JOB_COMPLETION_INDEX],
    ['SLURM_ARRAY_TASK_ID', env.SLURM_ARRAY_TASK_ID],
  ];
  const found = sources.find(([, v]) => v !== undefined && v !== '');
  if (found === undefined) {
    throw new UsageError(
      'bad-flag',
      '--plan needs the campaign to run: --index N, or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID in the environment',
    );
  }
  const [name, text] = found;
  const n = text !== undefined && /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 0)
    throw new UsageError('bad-flag', `${name} needs a whole number, got "${text}"`);
  if (n >= plan.campaigns.length) {
    throw new UsageError(
      'bad-flag',
      `${name} ${n} is out of range: ${plan.file} has campaigns 0 to ${plan.campaigns.length - 1}`,
    );
  }
  return n;
}

/** Where the campaigns of one comparison and side share what they learn. */
export function exchangeDir(plan: Plan, campaign: Pick<PlanCampaign, 'group' | 'arm'>): string {
  const safe = (text: string): string => text.replace(/[^A-Za-z0-9._-]+/g, '_');
  return join(plan.dir, EXCHANGE_DIR, safe(campaign.group), safe(campaign.arm));
}

/** Campaign `index`'s configuration, with the plan's store; checked by the one config schema. */
export function campaignConfig(plan: Plan, index: number): RunConfig {
  const campaign = plan.campaigns[index];
  const parsed = RunConfigSchema.safeParse({
    ...campaign.config,
    store: plan.storeDir,
    ...(campaign.exchange === true ? { exchange: exchangeDir(plan, campaign) } : {}),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      'bad-plan',
      `--plan: ${plan.file}: campaign ${index}: config.${issue.path.join('.')}: ${issue.message}`,
    );
  }
  return parsed.data;
}
