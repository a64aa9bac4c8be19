import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import Database from 'better-sqlite3';

import type { Op } from '../core/op.js';
import { hasColumn } from './_internals/columns.js';
import type { RunStatus } from './run-store.js';
import { type CheckerVerdict, verdictsFromChecks } from '../core/verdict.js';

/** The `run` row. */
export interface StoredRunRow {
  readonly id: string;
  readonly system: string;
  readonly seed: number;
  readonly policy: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly status: RunStatus;
  readonly summary: Readonly<Record<string, unknown>> | null;
}

export interface StoredSchedule {
  readonly idx: number;
  /** ms since the run started, as every `…Ms` time below unless said otherwise. */
  readonly startedMs: number;
  readonly endedMs: number | null;
  readonly ops: number | null;
  readonly recoveryMs: number | null;
  /** Whether it replayed a kept fault sequence (`corpus` policy; false in runs stored before it). */
  readonly followed: boolean;
  /**
   * What each check said; null while it ran (or when the run ended before its checks). Schedules
   * stored before verdicts were kept have them from their check lists (ops and time null).
   */
  readonly verdicts: readonly CheckerVerdict[] | null;
}

export interface StoredStep {
  readonly schedule: number;
  readonly step: number;
  readonly startedMs: number;
  readonly endedMs: number | null;
  readonly fault: string | null;
  readonly state: string | null;
  /** Its window reached a state no earlier window had (in any abstraction). */
  readonly newState: boolean;
}

export interface StoredFault {
  readonly id: number;
  readonly schedule: number;
  readonly step: number | null;
  /** ms since its schedule started. */
  readonly atMs: number;
  readonly f: string;
  readonly value: unknown;
  readonly nodes: readonly string[];
  readonly outcome: 'ok' | 'skipped' | 'error';
  readonly error: string | null;
  /** A fault fired by a trigger: its schedule line (`on`, `delayMs`, `$E`); null for the others. */
  readonly trigger: unknown;
  /**
   * A fault on links (partition, packet): the directed links `[from, to]` it acted on; null for
   * the others and in runs stored before links were kept.
   */
  readonly links: readonly (readonly [string, string])[] | null;
}

export interface StoredMetrics {
  readonly atMs: number;
  readonly schedule: number;
  readonly step: number;
  readonly values: Readonly<Record<string, number>>;
}

export interface StoredBug {
  readonly id: number;
  readonly schedule: number;
  readonly kind: string;
  readonly name: string;
  readonly message: string;
  readonly seed: number;
  readonly foundAtMs: number;
  readonly html: string | null;
}

/** Everything `run.db` holds about a run except the policy's values and the states' features. */
export interface StoredRun {
  readonly dir: string;
  readonly run: StoredRunRow;
  readonly schedules: readonly StoredSchedule[];
  readonly steps: readonly StoredStep[];
  readonly faults: readonly StoredFault[];
  readonly metrics: readonly StoredMetrics[];
  readonly bugs: readonly StoredBug[];
  /** Distinct states per abstraction. */
  readonly states: Readonly<Record<string, number>>;
  /** The text of each mined log template by id (`L7` → `became leader at term <*>`). */
  readonly templates: Readonly<Record<string, string>>;
}

/**
 * Why `dir` cannot be read as a run, or `undefined` when it has a `run.db` that records a run (a
 * file that is not a database, or one without its run, is named here, not met as a stack trace).
 */
export function notARunReason(dir: string): string | undefined {
  if (!existsSync(dir)) return `${dir} does not exist`;
  const file = join(dir, 'run.db');
  if (!existsSync(file)) return `${dir} is not a run directory (no run.db)`;
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      if (db.prepare('SELECT 1 FROM run LIMIT 1').get() === undefined)
        return `${file} records no run (it is empty)`;
    } finally {
      db.close();
    }
  } catch (e) {
    return `${file} cannot be read as a run's database (${e instanceof Error ? e.message : String(e)})`;
  }
  return undefined;
}

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

function metricsRow(m: { at_ms: number; schedule: number; step: number; values_json: string }): StoredMetrics {
  return {
    atMs: m.at_ms,
    schedule: m.schedule,
    step: m.step,
    values: parseJson<Record<string, number>>(m.values_json, {}),
  };
}

/**
 * Reads a run's database without writing to it (a running campaign may be writing it meanwhile).
 * Throws when `dir` has no `run.db` or the database has no run row.
 */
export function readStoredRun(dir: string): StoredRun {
  const reason = notARunReason(dir);
  if (reason !== undefined) throw new Error(reason);
  const db = new Database(join(dir, 'run.db'), { readonly: true, fileMustExist: true });
  try {
    const run = db.prepare('SELECT * FROM run').get() as
      | {
          id: string;
          system: string;
          seed: number;
          policy: string;
          config: string;
          started_at: string;
          ended_at: string | null;
          status: RunStatus;
          summary: string | null;
        }
      | undefined;
    if (!run) throw new Error(`${dir}/run.db has no run row: the run did not get past its start`);
    // Runs stored before the corpus policy have no `followed` column.
    const hasFollowed = hasColumn(db, 'schedules', 'followed');
    const schedules = db
      .prepare(
        `SELECT idx, started_ms, ended_ms, ops, recovery_ms, check_result, ${hasFollowed ? 'followed IS NOT NULL' : '0'} AS followed
         FROM schedules ORDER BY idx`,
      )
      .all() as {
      idx: number;
      started_ms: number;
      ended_ms: number | null;
      ops: number | null;
      recovery_ms: number | null;
      check_result: string | null;
      followed: number;
    }[];
    const steps = db
      .prepare(
        `SELECT schedule, step, started_ms, ended_ms, fault, state, EXISTS (SELECT 1 FROM states
           WHERE states.id = steps.state AND first_schedule = steps.schedule AND first_step = steps.step) AS new_state
         FROM steps ORDER BY schedule, step`,
      )
      .all() as {
      schedule: number;
      step: number;
      started_ms: number;
      ended_ms: number | null;
      fault: string | null;
      state: string | null;
      new_state: number;
    }[];
    const faults = db.prepare('SELECT * FROM faults ORDER BY id').all() as {
      id: number;
      schedule: number;
      step: number | null;
      at_ms: number;
      f: string;
      value: string | null;
      nodes: string | null;
      outcome: StoredFault['outcome'];
      error: string | null;
      /** Absent in runs stored before triggers existed. */
      trigger?: string | null;
      /** Absent in runs stored before links were kept. */
      links?: string | null;
    }[];
    const metrics = db.prepare('SELECT * FROM metrics ORDER BY at_ms').all() as {
      at_ms: number;
      schedule: number;
      step: number;
      values_json: string;
    }[];
    const bugs = db
      .prepare('SELECT id, schedule, kind, name, message, seed, found_at_ms, html FROM bugs ORDER BY id')
      .all() as {
      id: number;
      schedule: number;
      kind: string;
      name: string;
      message: string;
      seed: number;
      found_at_ms: number;
      html: string | null;
    }[];
    const states = db.prepare('SELECT abstraction, COUNT(*) AS n FROM states GROUP BY abstraction').all() as {
      abstraction: string;
      n: number;
    }[];
    return {
      dir,
      run: {
        id: run.id,
        system: run.system,
        seed: run.seed,
        policy: run.policy,
        config: parseJson(run.config, {}),
        startedAt: run.started_at,
        endedAt: run.ended_at,
        status: run.status,
        summary: parseJson(run.summary, null),
      },
      schedules: schedules.map((s) => ({
        idx: s.idx,
        startedMs: s.started_ms,
        endedMs: s.ended_ms,
        ops: s.ops,
        recoveryMs: s.recovery_ms,
        followed: s.followed === 1,
        verdicts: storedVerdicts(parseJson<unknown>(s.check_result, null)),
      })),
      steps: steps.map((s) => ({
        schedule: s.schedule,
        step: s.step,
        startedMs: s.started_ms,
        endedMs: s.ended_ms,
        fault: parseJson<string | null>(s.fault, null),
        state: s.state,
        newState: s.new_state === 1,
      })),
      faults: faults.map((f) => ({
        id: f.id,
        schedule: f.schedule,
        step: f.step,
        atMs: f.at_ms,
        f: f.f,
        value: parseJson<unknown>(f.value, null),
        nodes: parseJson<string[]>(f.nodes, []),
        outcome: f.outcome,
        error: f.error,
        trigger: parseJson<unknown>(f.trigger ?? null, null),
        links: parseJson<[string, string][] | null>(f.links ?? null, null),
      })),
      metrics: metrics.map(metricsRow),
      bugs: bugs.map((b) => ({
        id: b.id,
        schedule: b.schedule,
        kind: b.kind,
        name: b.name,
        message: b.message,
        seed: b.seed,
        foundAtMs: b.found_at_ms,
        html: b.html,
      })),
      states: Object.fromEntries(states.map((s) => [s.abstraction, s.n])),
      templates: Object.fromEntries(readTemplates(db).map((t) => [t.id, t.tokens.join(' ')])),
    };
  } finally {
    db.close();
  }
}

/** The `metrics` table alone, in time order (what a comparison plots). */
export function readStoredMetrics(dir: string): StoredMetrics[] {
  const db = new Database(join(dir, 'run.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT * FROM metrics ORDER BY at_ms').all() as {
      at_ms: number;
      schedule: number;
      step: number;
      values_json: string;
    }[];
    return rows.map(metricsRow);
  } finally {
    db.close();
  }
}

/** A mined log template as a run saved it (the shape of the observer's `LogTemplate`). */
export interface StoredLogTemplate {
  readonly id: string;
  readonly tokens: readonly string[];
  readonly size: number;
}

/** What an earlier run hands a new campaign (`--seed-from`): the policy's values, the states seen, the log templates. */
export interface StoredSeed {
  /** The run row's identity, or undefined when the run did not get past its start. */
  readonly run: { readonly system: string; readonly policy: string; readonly status: RunStatus } | undefined;
  readonly values: readonly { state: string; action: string; value: number; visits: number }[];
  readonly states: readonly { abstraction: string; id: string; features: string; visits: number }[];
  /** Its mined log templates, `L1` first: their ids are event types in its states and values. */
  readonly templates: readonly StoredLogTemplate[];
}

/** Reads a run's policy values (of `policy`), states and log templates. Throws when `dir` has no `run.db`. */
export function readStoredSeed(dir: string, policy: string): StoredSeed {
  const reason = notARunReason(dir);
  if (reason !== undefined) throw new Error(reason);
  const db = new Database(join(dir, 'run.db'), { readonly: true, fileMustExist: true });
  try {
    const run = db.prepare('SELECT system, policy, status FROM run').get() as StoredSeed['run'];
    const values = db
      .prepare('SELECT state, action, value, visits FROM policy_values WHERE policy = ?')
      .all(policy) as StoredSeed['values'];
    const states = db
      .prepare('SELECT abstraction, id, features, visits FROM states ORDER BY rowid')
      .all() as StoredSeed['states'];
    return { run, values, states, templates: readTemplates(db) };
  } finally {
    db.close();
  }
}

/** The mined log templates a run saved (none in runs stored before they were saved). */
function readTemplates(db: Database.Database): StoredLogTemplate[] {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'log_templates'").get();
  if (table === undefined) return [];
  const rows = db.prepare('SELECT id, tokens, size FROM log_templates').all() as {
    id: string;
    tokens: string;
    size: number;
  }[];
  return rows
    .map((r) => ({ id: r.id, tokens: parseJson<string[]>(r.tokens, []), size: r.size }))
    .sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
}

/**
 * The ops of `history.jsonl`, in order; a torn last line (a run killed mid-write) is left out.
 * No file gives no ops.
 */
export async function readHistory(dir: string): Promise<Op[]> {
  const file = join(dir, 'history.jsonl');
  if (!existsSync(file)) return [];
  const ops: Op[] = [];
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    try {
      ops.push(JSON.parse(line) as Op);
    } catch {
      // a line cut short by a kill
    }
  }
  return ops;
}

/** A schedule's verdicts from its stored check result (see `StoredSchedule.verdicts`). */
function storedVerdicts(checkResult: unknown): readonly CheckerVerdict[] | null {
  if (typeof checkResult !== 'object' || checkResult === null) return null;
  const { verdicts, checks } = checkResult as { verdicts?: unknown; checks?: unknown };
  if (Array.isArray(verdicts)) return verdicts as CheckerVerdict[];
  if (typeof checks !== 'object' || checks === null) return null;
  // Before verdicts were kept: the lists of what each checker found; crashes and recovery were not in them.
  const lists = Object.fromEntries(
    Object.entries(checks).filter((e): e is [string, string[]] => Array.isArray(e[1])),
  );
  return verdictsFromChecks(lists);
}
