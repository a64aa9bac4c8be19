import type { RunTiming } from '../core/run-timing.js';
import { stateDependence, type ReplayRate } from '../store/replay-record.js';
import { CHECKPOINTS_DIR, readCheckpointIndex } from '../store/checkpoint-files.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { z } from 'zod/v4';

import { runVerdict, scheduleVerdicts } from '../core/verdict.js';
import { replayOfConfig } from '../store/replay-of.js';
import { replayCommand } from '../core/replay-command.js';
import { templateIdOf } from '../observe/log-events.js';
import type { RunData } from './run-data.js';
import { sequenceStats } from './sequence-stats.js';
import { triggerStats } from './trigger-stats.js';

/**
 * `results.json`: what a run did and found, for scripts and CI. Versioned: a change that removes or
 * changes a field bumps `version`; adding a field does not. `src/report/results.schema.json` is the
 * same schema as a JSON Schema document (generated from this one; a test keeps them equal).
 */
export const RESULTS_SCHEMA_NAME = 'mallory/results';
/**
 * 2: every schedule's verdicts (`schedules`) and the run's (`verdict`), as Jepsen's `:valid?`.
 * 3: `counts.ops.refused`, fails from refused connections, no longer counted in `counts.ops.fail`.
 */
export const RESULTS_VERSION = 3;

const Ms = z.number().int().min(0);
const Count = z.number().int().min(0);

/** A group of schedules: how many, their windows (with a state), and how many of those were new. */
const ScheduleGroup = z
  .object({
    schedules: Count,
    windows: Count.describe('their windows whose state arrived'),
    newStates: Count.describe('of those, windows that reached a state never seen before'),
  })
  .strict();

const Valid = z
  .union([z.boolean(), z.literal('unknown')])
  .describe("true valid, false invalid, 'unknown' when the check could not tell");

const CheckerVerdictSchema = z
  .object({
    checker: z.string().describe('crash, recovery, or a checker: linearizable, list-append, set, …'),
    valid: Valid,
    reason: z.string().optional().describe('why it could not tell'),
    findings: z.array(z.string()).describe('what it found, as kind/name'),
    ops: Count.nullable().describe('client ops it checked; null for crash and recovery'),
    ms: Ms.nullable().describe('time it took; null where nothing was computed'),
  })
  .strict();

/** `run.replayOf`: as `store/replay-of.ts` keeps it in the run's configuration. */
const ReplayOfResult = z
  .object({
    kind: z.enum(['replay', 'shrink']),
    bugDir: z.string().describe("the bug's directory, absolute"),
    run: z.string().optional().describe('the run that found the bug, absolute'),
    bug: Count.optional().describe("the bug's id in that run"),
    finding: z.object({ kind: z.string(), name: z.string() }).strict(),
    candidate: Count.optional().describe("a shrink's candidate schedule (0: the bug's own)"),
    try: Count.describe('the try among those of its replay or candidate, from 0'),
  })
  .strict();

const SimWorld = z
  .object({
    seed: z.number().int(),
    contract: z.enum(['C1', 'C2', 'C3']).describe("the simulated disks' storage contract (--sim-contract)"),
    partitions: z
      .enum(['proxy', 'netns'])
      .describe("cuts with the proxies' semantics (reset) or iptables' (held)"),
    digest: z
      .string()
      .describe(
        "sha-256 of the world's events in order with their virtual times: the same for every run of one seed",
      ),
  })
  .strict();

export const ResultsSchema = z
  .object({
    schema: z.literal(RESULTS_SCHEMA_NAME),
    version: z.literal(RESULTS_VERSION),
    run: z
      .object({
        id: z.string(),
        dir: z.string().describe('the run directory, absolute'),
        system: z.string(),
        seed: z.number().int(),
        policy: z.string().describe('adaptive, mallory, random, or schedule (a fixed --schedule)'),
        nodes: z.array(z.string()),
        startedAt: z.string().describe('ISO-8601'),
        endedAt: z.string().nullable().describe('ISO-8601; null while running or when killed'),
        durationMs: Ms.nullable(),
        config: z.record(z.string(), z.unknown()).describe('the campaign configuration as run'),
        replayOf: ReplayOfResult.optional().describe(
          'the bug this run is a try of (mallory replay, mallory shrink); absent for a campaign',
        ),
      })
      .strict(),
    status: z.enum(['running', 'complete', 'incomplete', 'interrupted', 'error']),
    timing: z
      .object({
        budgetMs: Ms.describe('--time: no schedule starts after it (counted from the run start)'),
        startupMs: Ms.describe('from the run start to the first schedule: cluster start and warm-up'),
        schedulesMs: Ms.describe('the schedules, each with its reset, final reads and checks'),
        stoppingMs: Ms.describe('after the last schedule: stopping the nodes and observers'),
        elapsedMs: Ms.describe(
          "the whole run; above budgetMs by the last schedule's reset, final reads and checks",
        ),
        afterBudget: z
          .object({
            faultsEndedMs: Ms.describe("when the last schedule's faults ended, from the run start"),
            resetMs: Ms.describe('healing every fault and waiting for the system to serve again'),
            finalReadsMs: Ms,
            checksMs: Ms,
          })
          .strict()
          .optional()
          .describe('what followed --time, when the last schedule ended after it'),
      })
      .strict()
      .optional()
      .describe('where the wall time went, when the run ended'),
    error: z.string().optional().describe('why the run ended with status error'),
    counts: z
      .object({
        schedules: Count,
        ops: z
          .object({
            ok: Count,
            fail: Count.describe('fails other than refused connections'),
            info: Count,
            refused: Count.describe(
              'fails whose connection was refused at once (a node down), apart from fail',
            ),
          })
          .strict()
          .describe('client ops by outcome'),
        faults: z
          .object({ ok: Count, skipped: Count, error: Count })
          .strict()
          .describe('faults tried, by outcome'),
        bugs: Count.describe('bugs: one per root cause, however many schedules found it'),
        bugHits: Count.optional().describe(
          'schedules that found a bug, summed over the bugs (absent in runs stored before bugs had hits)',
        ),
      })
      .strict(),
    faults: z.array(
      z
        .object({
          schedule: Count,
          step: Count.nullable(),
          atMs: Ms.describe('ms since the run started'),
          f: z.string().describe('Jepsen name: kill, start-partition, …'),
          value: z.unknown().describe('the target as chosen: one, leader, halves, [nodes], …'),
          nodes: z.array(z.string()).describe('the nodes it acted on'),
          outcome: z.enum(['ok', 'skipped', 'error']),
          error: z.string().nullable().describe('why it errored or was skipped'),
          grudge: z
            .string()
            .optional()
            .describe(
              "a fault on links: its sides ('n1,n3 | n2') or target ('from n3 to n1,n2'); absent for other faults and runs stored before links were kept",
            ),
        })
        .strict(),
    ),
    bugs: z.array(
      z
        .object({
          id: z.number().int().min(1),
          schedule: Count,
          kind: z.string().describe('crash, recovery, linearizability, invariant, …'),
          name: z.string(),
          message: z.string(),
          foundAtMs: Ms,
          signature: z
            .string()
            .optional()
            .describe(
              'what makes a later finding a hit of this bug: kind, name and the shape of its evidence',
            ),
          hits: z
            .array(z.object({ schedule: Count, foundAtMs: Ms, message: z.string() }).strict())
            .optional()
            .describe(
              'every schedule that found it, the first (whose schedule and evidence the record keeps, for replay) included',
            ),
          dir: z.string().describe('the bug record: schedule.jsonl, evidence.json, check.html'),
          checkHtml: z.string().nullable(),
          replay: z.string().describe('the command that runs it again'),
          shrink: z.string().describe('the command that cuts its schedule down'),
          checkpoint: z
            .string()
            .nullable()
            .describe(
              "the checkpoint of the bug's schedule a replay starts from; null when the run kept none",
            ),
          replays: z
            .object({
              checkpoint: z.object({ reproduced: Count, tries: Count }).strict().nullable(),
              fresh: z.object({ reproduced: Count, tries: Count }).strict().nullable(),
              dependsOnState: z
                .boolean()
                .describe(
                  'reproduced from its checkpoint in a majority of tries, from empty data dirs never',
                ),
            })
            .strict()
            .optional()
            .describe('its `mallory replay` runs (bugs/<id>/replays.jsonl), summed per start'),
        })
        .strict(),
    ),
    checkpoints: z
      .object({
        keep: Count.describe('--checkpoints: the newest schedules kept besides the bugs'),
        capBytes: Count.describe('--checkpoint-cap'),
        taken: Count,
        kept: z.array(
          z.object({ schedule: Count, bytes: Count, pauseMs: z.number().min(0), bug: z.boolean() }).strict(),
        ),
        dropped: z.array(z.object({ schedule: Count, bytes: Count, reason: z.string() }).strict()),
        bytes: Count.describe('the bytes of the checkpoints kept'),
        pauseMsMedian: z
          .number()
          .min(0)
          .nullable()
          .describe('how long the nodes were stopped for a copy, median'),
        pauseMsMax: z.number().min(0).nullable(),
        bytesPerSchedule: Count.nullable().describe("a checkpoint's bytes (holes not counted), median"),
      })
      .strict()
      .optional()
      .describe("every node's data dir at each schedule's start, for replay (`checkpoints/index.json`)"),
    triggers: z
      .array(
        z
          .object({
            on: z.string().describe('the event type the triggers waited for'),
            template: z
              .string()
              .optional()
              .describe('for a mined log template (L7, L7/leader), its text: <*> where lines differ'),
            armed: Count.describe('steps that armed a trigger on it'),
            fired: Count.describe('of those, steps where it fired'),
            firedNewStates: Count.describe('of the firings, those whose window reached a new state'),
          })
          .strict(),
      )
      .optional()
      .describe('triggered actions per event type, highest share fired first (policies that arm triggers)'),
    sequences: z
      .object({
        replayed: ScheduleGroup.describe('the schedules that replayed a kept fault sequence'),
        own: ScheduleGroup.describe('the others (the policy decided every step)'),
      })
      .strict()
      .optional()
      .describe('whether replaying kept fault sequences paid (`corpus` policy, once it replayed one)'),
    verdict: z
      .object({
        valid: Valid.describe("the schedules' verdicts merged: any invalid, else any unknown, else valid"),
        checkers: z.array(
          z
            .object({
              checker: z.string(),
              schedules: Count,
              valid: Count,
              invalid: Count,
              unknown: Count,
            })
            .strict(),
        ),
      })
      .strict()
      .describe('the run as a whole, and how often each check said what'),
    schedules: z
      .array(
        z
          .object({
            schedule: Count,
            valid: Valid,
            checkers: z.array(CheckerVerdictSchema),
          })
          .strict(),
      )
      .describe('each checked schedule: what each check said'),
    coverage: z
      .record(z.string(), z.number())
      .describe('final coverage metrics: states_<abstraction>, event_types, intra_pairs, …'),
    sim: SimWorld.optional().describe('the simulated world of a run with --sim; absent for a real run'),
  })
  .strict();

export type Results = z.infer<typeof ResultsSchema>;

/** The JSON Schema document of `results.json`. */
export function resultsJsonSchema(): Record<string, unknown> {
  return {
    title: 'Mallory run results',
    ...z.toJSONSchema(ResultsSchema, { target: 'draft-7' }),
  };
}

/** The commands printed for a bug: run it again (once if its run was simulated), and cut its schedule down. */
export function bugCommands(
  bugDir: string,
  simulated: boolean,
): { readonly replay: string; readonly shrink: string } {
  return { replay: replayCommand('mallory', bugDir, simulated), shrink: `mallory shrink ${bugDir}` };
}

/** A bug's recorded replays, summed per start, as results.json gives them. */
function replaysOf(bugDir: string): { replays?: NonNullable<Results['bugs'][number]['replays']> } {
  const d = stateDependence(bugDir);
  if (d === undefined) return {};
  const copy = (r: ReplayRate | null) => (r === null ? null : { reproduced: r.reproduced, tries: r.tries });
  return {
    replays: { checkpoint: copy(d.checkpoint), fresh: copy(d.fresh), dependsOnState: d.dependsOnState },
  };
}

/** Whether a stored summary's `timing` has the shape results.json gives it. */
function timingOf(value: unknown): value is RunTiming {
  if (typeof value !== 'object' || value === null) return false;
  const keys = ['budgetMs', 'startupMs', 'schedulesMs', 'stoppingMs', 'elapsedMs'];
  const record = value as Record<string, unknown>;
  const after = record.afterBudget;
  const afterKeys = ['faultsEndedMs', 'resetMs', 'finalReadsMs', 'checksMs'];
  const afterOk =
    after === undefined ||
    (typeof after === 'object' &&
      after !== null &&
      afterKeys.every((k) => typeof (after as Record<string, unknown>)[k] === 'number') &&
      Object.keys(after).length === afterKeys.length);
  return (
    keys.every((k) => typeof record[k] === 'number') &&
    afterOk &&
    Object.keys(value).length === keys.length + (after === undefined ? 0 : 1)
  );
}

/** The results of a run, from what its directory holds. */
export function runResults(data: RunData): Results {
  const { stored } = data;
  const run = stored.run;
  const summary = run.summary ?? {};
  const faultCounts = { ok: 0, skipped: 0, error: 0 };
  for (const f of data.faults) faultCounts[f.outcome]++;
  const opCounts = { ok: 0, fail: 0, info: 0, refused: 0 };
  for (const c of data.completions) {
    if (c.refused === true) opCounts.refused++;
    else opCounts[c.outcome]++;
  }
  const lastMetrics = stored.metrics.length > 0 ? stored.metrics[stored.metrics.length - 1].values : {};
  const summaryMetrics = isNumberRecord(summary.metrics) ? summary.metrics : undefined;
  const coverage = summaryMetrics ?? {
    ...lastMetrics,
    ...Object.fromEntries(Object.entries(stored.states).map(([a, n]) => [`states_${a}`, n])),
  };
  const startedMs = Date.parse(run.startedAt);
  const triggers = triggerStats(stored.steps, stored.faults).map((t) => {
    const template = stored.templates[templateIdOf(t.on)];
    return template !== undefined ? { ...t, template } : t;
  });
  const sequences = sequenceStats(stored.schedules, stored.steps);
  const checkpoints = readCheckpointIndex(data.dir);
  const schedules = stored.schedules.flatMap((s) =>
    s.verdicts === null ? [] : [scheduleVerdicts(s.idx, s.verdicts)],
  );
  const verdict = runVerdict(schedules);
  const replayOf = replayOfConfig(run.config);
  // A simulated run's bugs replay exactly: its config says so from the start, its summary at the end.
  const simulated = run.config['sim'] !== undefined || isSimWorld(summary.sim);
  return {
    schema: RESULTS_SCHEMA_NAME,
    version: RESULTS_VERSION,
    run: {
      id: run.id,
      dir: data.dir,
      system: run.system,
      seed: run.seed,
      policy: run.policy,
      nodes: [...data.nodes],
      startedAt: run.startedAt,
      endedAt: run.endedAt,
      durationMs: run.endedAt === null ? null : Math.max(0, Math.round(Date.parse(run.endedAt) - startedMs)),
      config: { ...run.config },
      ...(replayOf !== undefined ? { replayOf } : {}),
    },
    status: run.status,
    ...(timingOf(summary.timing) ? { timing: summary.timing } : {}),
    ...(typeof summary.error === 'string' ? { error: summary.error } : {}),
    counts: {
      schedules: stored.schedules.length,
      ops: opCounts,
      faults: faultCounts,
      bugs: stored.bugs.length,
      bugHits: stored.bugs.reduce((n, b) => n + b.hits.length, 0),
    },
    faults: data.faults.map((f) => ({
      schedule: f.schedule,
      step: f.step,
      atMs: Math.max(0, Math.round(f.atMs)),
      f: f.f,
      value: f.value,
      nodes: [...f.nodes],
      outcome: f.outcome,
      error: f.error,
      ...(f.grudge !== null ? { grudge: f.grudge } : {}),
    })),
    bugs: stored.bugs.map((b) => {
      const dir = join(data.dir, 'bugs', String(b.id));
      const html = join(dir, 'check.html');
      return {
        id: b.id,
        schedule: b.schedule,
        kind: b.kind,
        name: b.name,
        message: b.message,
        foundAtMs: Math.max(0, Math.round(b.foundAtMs)),
        ...(b.signature !== null ? { signature: b.signature } : {}),
        hits: b.hits.map((h) => ({
          schedule: h.schedule,
          foundAtMs: Math.max(0, Math.round(h.foundAtMs)),
          message: h.message,
        })),
        dir,
        checkHtml: existsSync(html) ? html : null,
        ...bugCommands(dir, simulated),
        ...replaysOf(dir),
        checkpoint: checkpoints?.kept.some((k) => k.schedule === b.schedule)
          ? join(data.dir, CHECKPOINTS_DIR, String(b.schedule))
          : null,
      };
    }),
    ...(checkpoints !== undefined
      ? {
          checkpoints: {
            ...checkpoints,
            kept: checkpoints.kept.map((k) => ({ ...k })),
            dropped: checkpoints.dropped.map((d) => ({ ...d })),
          },
        }
      : {}),
    ...(triggers.length > 0 ? { triggers } : {}),
    ...(sequences !== undefined ? { sequences } : {}),
    verdict: { valid: verdict.valid, checkers: verdict.checkers.map((t) => ({ ...t })) },
    schedules: schedules.map((s) => ({
      schedule: s.schedule,
      valid: s.valid,
      checkers: s.checkers.map((c) => ({ ...c, findings: [...c.findings] })),
    })),
    coverage,
    ...(isSimWorld(summary.sim) ? { sim: summary.sim } : {}),
  };
}

function isSimWorld(value: unknown): value is z.infer<typeof SimWorld> {
  return SimWorld.safeParse(value).success;
}

function isNumberRecord(value: unknown): value is Record<string, number> {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.values(value).every((v) => typeof v === 'number' && Number.isFinite(v))
  );
}
