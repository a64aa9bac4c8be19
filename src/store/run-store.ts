import { closeSync, existsSync, mkdirSync, openSync, readlinkSync, renameSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { join, relative } from 'node:path';

import Database from 'better-sqlite3';

import { crashPoint } from '../core/crash-point.js';
import { errorCode, makeDirs } from '../core/fs.js';
import { UsageError } from '../core/errors.js';
import type { Op } from '../core/op.js';
import { hasColumn } from './_internals/columns.js';
import { isDiskFull, StoreFullError } from './store-full.js';
import type { StoredLogTemplate } from './run-reader.js';
import type { RunStatus } from './run-status.js';

export type { RunStatus } from './run-status.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS run (
  id TEXT PRIMARY KEY, system TEXT NOT NULL, seed INTEGER NOT NULL, policy TEXT NOT NULL,
  config TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT, status TEXT NOT NULL, summary TEXT
);
CREATE TABLE IF NOT EXISTS schedules (
  idx INTEGER PRIMARY KEY, started_ms INTEGER NOT NULL, ended_ms INTEGER, ops INTEGER,
  check_result TEXT, recovery_ms INTEGER, followed TEXT
);
CREATE TABLE IF NOT EXISTS steps (
  schedule INTEGER NOT NULL, step INTEGER NOT NULL, started_ms INTEGER NOT NULL, ended_ms INTEGER,
  fault TEXT, state TEXT, state_arrived INTEGER, reward REAL, metrics TEXT,
  PRIMARY KEY (schedule, step)
);
CREATE TABLE IF NOT EXISTS faults (
  id INTEGER PRIMARY KEY AUTOINCREMENT, schedule INTEGER NOT NULL, step INTEGER, at_ms INTEGER NOT NULL,
  f TEXT NOT NULL, value TEXT, nodes TEXT, outcome TEXT NOT NULL, error TEXT, trigger TEXT, links TEXT
);
CREATE TABLE IF NOT EXISTS states (
  abstraction TEXT NOT NULL, id TEXT NOT NULL, features TEXT NOT NULL, first_schedule INTEGER,
  first_step INTEGER, visits INTEGER NOT NULL, PRIMARY KEY (abstraction, id)
);
CREATE TABLE IF NOT EXISTS policy_values (
  policy TEXT NOT NULL, state TEXT NOT NULL, action TEXT NOT NULL, value REAL NOT NULL,
  visits INTEGER NOT NULL, PRIMARY KEY (policy, state, action)
);
CREATE TABLE IF NOT EXISTS bugs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, schedule INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
  message TEXT NOT NULL, evidence TEXT NOT NULL, fault_schedule TEXT NOT NULL, seed INTEGER NOT NULL,
  found_at_ms INTEGER NOT NULL, html TEXT
);
CREATE TABLE IF NOT EXISTS log_templates (
  id TEXT PRIMARY KEY, tokens TEXT NOT NULL, size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS metrics (
  at_ms INTEGER NOT NULL, schedule INTEGER NOT NULL, step INTEGER NOT NULL, values_json TEXT NOT NULL
);
`;

export interface RunInfo {
  readonly id: string;
  readonly system: string;
  readonly seed: number;
  readonly policy: string;
  readonly config: unknown;
}

/**
 * Where a run's directory is named from and what its stamps read: by default the host's clock
 * (`<timestamp>/`, `started_at` now); a simulated run passes its world's virtual time and a name
 * of its own, so two runs of one seed are stored alike.
 */
export interface RunPlace {
  /** The time `started_at` and `ended_at` read. */
  readonly now?: () => Date;
  /** The directory's name (`-1`, `-2` … added when taken), instead of the start's timestamp. */
  readonly name?: string;
}

export interface FaultRow {
  readonly schedule: number;
  readonly step: number | null;
  readonly atMs: number;
  readonly f: string;
  readonly value: unknown;
  readonly nodes: readonly string[];
  readonly outcome: 'ok' | 'skipped' | 'error';
  readonly error?: string;
  /** A fault fired by a trigger: the line as a schedule file writes it (`on`, `delayMs`, `$E`). */
  readonly trigger?: unknown;
  /** A fault on links (partition, packet): the directed links it acted on, `[from, to]`. */
  readonly links?: readonly (readonly [string, string])[];
}

export interface BugRow {
  readonly schedule: number;
  readonly kind: string;
  readonly name: string;
  readonly message: string;
  readonly evidence: unknown;
  readonly faultSchedule: readonly unknown[];
  readonly seed: number;
  readonly foundAtMs: number;
  readonly html?: string;
  /** What makes later findings hits of this one. */
  readonly signature?: string;
  /** Every schedule that found it, the first included. */
  readonly hits?: readonly unknown[];
}

/** `YYYYMMDDTHHMMSS.mmmZ`-style names sort by time, as Jepsen's store does. */
/** Makes `dir` (its parent exists); false when it exists already. */
function claimDir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    if (isDiskFull(error)) throw new StoreFullError(dir, error);
    throw new UsageError('bad-dir', `--store: cannot create ${dir} (${errorCode(error)}): give a writable directory`);
  }
}

export function timestampName(date = new Date()): string {
  return date.toISOString().replace(/[-:]/g, '').replace('.', '-');
}

/**
 * One run's directory: `store/<system>/<timestamp>/` with `run.db`, `history.jsonl` and
 * `nodes/<n>/`. Everything is written as the run goes, so a killed run keeps what it had.
 */
export class RunStore {
  readonly dir: string;
  private readonly db: Database.Database;
  private readonly historyFd: number;
  private readonly insertFault: Database.Statement;
  private readonly upsertStep: Database.Statement;

  private constructor(
    dir: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.dir = dir;
    this.db = new Database(join(dir, 'run.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    // Runs stored before triggers existed have no `trigger` column; before the corpus policy, no `followed`.
    if (!hasColumn(this.db, 'faults', 'trigger')) this.db.exec('ALTER TABLE faults ADD COLUMN trigger TEXT');
    // Before a fault's links were kept (its grudge), no `links`.
    if (!hasColumn(this.db, 'faults', 'links')) this.db.exec('ALTER TABLE faults ADD COLUMN links TEXT');
    if (!hasColumn(this.db, 'schedules', 'followed')) this.db.exec('ALTER TABLE schedules ADD COLUMN followed TEXT');
    // Before one bug per root cause, every finding was a bug of its own: no signature, no hits.
    if (!hasColumn(this.db, 'bugs', 'signature')) this.db.exec('ALTER TABLE bugs ADD COLUMN signature TEXT');
    if (!hasColumn(this.db, 'bugs', 'hits')) this.db.exec('ALTER TABLE bugs ADD COLUMN hits TEXT');
    this.historyFd = openSync(join(dir, 'history.jsonl'), 'a');
    this.insertFault = this.db.prepare(
      'INSERT INTO faults (schedule, step, at_ms, f, value, nodes, outcome, error, trigger, links) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.upsertStep = this.db.prepare(
      `INSERT INTO steps (schedule, step, started_ms, ended_ms, fault, state, state_arrived, reward, metrics)
       VALUES (@schedule, @step, @startedMs, @endedMs, @fault, @state, @stateArrived, @reward, @metrics)
       ON CONFLICT (schedule, step) DO UPDATE SET ended_ms = excluded.ended_ms, fault = excluded.fault,
       state = excluded.state, state_arrived = excluded.state_arrived, reward = excluded.reward,
       metrics = excluded.metrics`,
    );
  }

  /**
   * Creates `<storeDir>/<system>/<timestamp>/` and points `<storeDir>/latest` at it; `onDir` hears
   * the directory's name before it is created.
   */
  static create(
    storeDir: string,
    info: RunInfo,
    onDir?: (dir: string) => void,
    place: RunPlace = {},
  ): RunStore {
    makeDirs(storeDir, '--store');
    const systemDir = join(storeDir, info.system);
    makeDirs(systemDir, '--store');
    const now = place.now ?? ((): Date => new Date());
    const name = place.name ?? timestampName(now());
    let dir = join(systemDir, name);
    for (let i = 1; ; i++) {
      // Named (to the run's registry) before it exists, so a crash from here on leaves a run that
      // `mallory cleanup` can mark incomplete.
      onDir?.(dir);
      // Made, not found: two campaigns starting in the same millisecond on one store (a fleet's
      // workers) each get a directory of their own.
      if (claimDir(dir)) break;
      dir = join(systemDir, `${name}-${i}`);
    }
    makeDirs(join(dir, 'nodes'), '--store');
    let store: RunStore;
    try {
      store = new RunStore(dir, now);
    } catch (error) {
      if (isDiskFull(error)) throw new StoreFullError(dir, error);
      throw error;
    }
    store.db
      .prepare('INSERT INTO run (id, system, seed, policy, config, started_at, status) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(info.id, info.system, info.seed, info.policy, JSON.stringify(info.config), now().toISOString(), 'running');
    try {
      pointLatest(storeDir, dir);
      crashPoint('run store created');
    } catch (error) {
      store.finish('error', { error: error instanceof Error ? error.message : String(error) });
      store.close();
      throw error;
    }
    return store;
  }

  /** Opens an existing run directory (for report, replay, cleanup). */
  static open(dir: string): RunStore {
    if (!existsSync(join(dir, 'run.db'))) throw new Error(`${dir} is not a run directory (no run.db)`);
    return new RunStore(dir);
  }

  appendOp(op: Op): void {
    this.write(() => {
      writeSync(this.historyFd, JSON.stringify(op) + '\n');
    });
  }

  scheduleStarted(idx: number, startedMs: number): void {
    this.write(() => {
      this.db.prepare('INSERT OR REPLACE INTO schedules (idx, started_ms) VALUES (?, ?)').run(idx, startedMs);
    });
  }

  /** The sequence a schedule replayed (`corpus` policy), as JSON in `schedules.followed`. */
  scheduleFollowed(idx: number, followed: unknown): void {
    this.write(() => {
      this.db.prepare('UPDATE schedules SET followed = ? WHERE idx = ?').run(JSON.stringify(followed), idx);
    });
  }

  scheduleEnded(idx: number, endedMs: number, ops: number, checkResult: unknown, recoveryMs: number | null): void {
    this.write(() => {
      this.db
        .prepare('UPDATE schedules SET ended_ms = ?, ops = ?, check_result = ?, recovery_ms = ? WHERE idx = ?')
        .run(endedMs, ops, JSON.stringify(checkResult), recoveryMs, idx);
    });
  }

  step(row: {
    schedule: number;
    step: number;
    startedMs: number;
    endedMs: number | null;
    fault: unknown;
    state: string | null;
    stateArrived: boolean | null;
    reward: number | null;
    metrics: unknown;
  }): void {
    this.write(() => {
      this.upsertStep.run({
        ...row,
        fault: JSON.stringify(row.fault),
        stateArrived: row.stateArrived === null ? null : row.stateArrived ? 1 : 0,
        metrics: row.metrics === null ? null : JSON.stringify(row.metrics),
      });
    });
  }

  fault(row: FaultRow): void {
    this.write(() => {
      this.insertFault.run(
        row.schedule,
        row.step,
        row.atMs,
        row.f,
        JSON.stringify(row.value),
        JSON.stringify(row.nodes),
        row.outcome,
        row.error ?? null,
        row.trigger === undefined ? null : JSON.stringify(row.trigger),
        row.links === undefined ? null : JSON.stringify(row.links),
      );
    });
  }

  metrics(atMs: number, schedule: number, step: number, values: Readonly<Record<string, number>>): void {
    this.write(() => {
      this.db
        .prepare('INSERT INTO metrics (at_ms, schedule, step, values_json) VALUES (?, ?, ?, ?)')
        .run(atMs, schedule, step, JSON.stringify(values));
    });
  }

  state(abstraction: string, id: string, features: readonly string[], schedule: number, step: number): void {
    this.write(() => {
      this.db
        .prepare(
          `INSERT INTO states (abstraction, id, features, first_schedule, first_step, visits) VALUES (?, ?, ?, ?, ?, 1)
           ON CONFLICT (abstraction, id) DO UPDATE SET visits = visits + 1`,
        )
        .run(abstraction, id, JSON.stringify(features), schedule, step);
    });
  }

  savePolicy(policy: string, values: readonly { state: string; action: string; value: number; visits: number }[]): void {
    this.write(() => {
      const insert = this.db.prepare(
        'INSERT OR REPLACE INTO policy_values (policy, state, action, value, visits) VALUES (?, ?, ?, ?, ?)',
      );
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM policy_values WHERE policy = ?').run(policy);
        for (const v of values) insert.run(policy, v.state, v.action, v.value, v.visits);
      })();
    });
  }

  /**
   * The log templates mined so far (their ids are event types): what `--seed-from` loads so a later
   * run gives the same lines the same ids, and what a report shows for an id.
   */
  saveLogTemplates(templates: readonly StoredLogTemplate[]): void {
    this.write(() => {
      const insert = this.db.prepare('INSERT OR REPLACE INTO log_templates (id, tokens, size) VALUES (?, ?, ?)');
      this.db.transaction(() => {
        for (const t of templates) insert.run(t.id, JSON.stringify(t.tokens), t.size);
      })();
    });
  }

  bug(row: BugRow): number {
    return this.write(() => {
      const result = this.db
        .prepare(
          `INSERT INTO bugs (schedule, kind, name, message, evidence, fault_schedule, seed, found_at_ms, html, signature, hits)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          row.schedule,
          row.kind,
          row.name,
          row.message,
          JSON.stringify(row.evidence),
          JSON.stringify(row.faultSchedule),
          row.seed,
          row.foundAtMs,
          row.html ?? null,
          row.signature ?? null,
          row.hits === undefined ? null : JSON.stringify(row.hits),
        );
      return Number(result.lastInsertRowid);
    });
  }

  /** Every schedule that found the bug so far (a later schedule found it again). */
  setBugHits(id: number, hits: readonly unknown[]): void {
    this.write(() => {
      this.db.prepare('UPDATE bugs SET hits = ? WHERE id = ?').run(JSON.stringify(hits), id);
    });
  }

  /** Points a bug at its checker's page once the page is written. */
  setBugHtml(id: number, html: string): void {
    this.write(() => {
      this.db.prepare('UPDATE bugs SET html = ? WHERE id = ?').run(html, id);
    });
  }

  finish(status: RunStatus, summary: unknown): void {
    this.write(() => {
      this.db
        .prepare('UPDATE run SET ended_at = ?, status = ?, summary = ?')
        .run(this.now().toISOString(), status, JSON.stringify(summary));
    });
  }

  /** Records a final status unless the run already has one (for exits that skip the normal end). */
  finishIfRunning(status: RunStatus, summary: unknown): void {
    this.write(() => {
      if (!this.db.open) return;
      this.db
        .prepare("UPDATE run SET ended_at = ?, status = ?, summary = ? WHERE status = 'running'")
        .run(this.now().toISOString(), status, JSON.stringify(summary));
    });
  }

  /** A write to the store; a full disk under it is a `StoreFullError` naming the store. */
  private write<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (isDiskFull(error)) throw new StoreFullError(this.dir, error);
      throw error;
    }
  }

  close(): void {
    if (!this.db.open) return;
    closeSync(this.historyFd);
    this.db.close();
  }
}

/** Marks a run that a crashed fuzzer left `running` as `incomplete` (used by `mallory cleanup`). */
export function markIncomplete(dir: string): boolean {
  if (!existsSync(join(dir, 'run.db'))) return false;
  const db = new Database(join(dir, 'run.db'));
  try {
    const changed = db
      .prepare("UPDATE run SET status = 'incomplete', ended_at = ? WHERE status = 'running'")
      .run(new Date().toISOString()).changes;
    return changed > 0;
  } finally {
    db.close();
  }
}

function pointLatest(storeDir: string, dir: string): void {
  const link = join(storeDir, 'latest');
  const tmp = `${link}.${process.pid}`;
  try {
    unlinkSync(tmp);
  } catch {
    // no stale temp link
  }
  symlinkSync(relative(storeDir, dir), tmp);
  renameSync(tmp, link);
}

/** The run directory `store/latest` points at. */
export function latestRun(storeDir: string): string | undefined {
  try {
    return join(storeDir, readlinkSync(join(storeDir, 'latest')));
  } catch {
    return undefined;
  }
}
