import { randomUUID } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import type { Coverage } from '../abstraction/coverage.js';
import { errorCode, makeDirs } from '../core/fs.js';
import { UsageError } from '../core/errors.js';
import type { Drain } from '../observe/drain.js';
import { renameTemplateIds } from '../observe/template-ids.js';
import type { Policy, PolicyValue, SharedSequence } from '../policy/policy.js';
import { readStoredSeed } from '../store/run-reader.js';

/**
 * Campaigns that learn from each other while they run (`--exchange DIR`, a directory every
 * campaign of a fleet can reach). At each schedule's end a campaign publishes what it learned
 * itself — its policy's values with the visits it made, the states it reached with their visits,
 * its mined log templates — as `DIR/<worker>.json`; at each schedule's start it takes what the
 * others published since it last looked, merged by visits: a value seen n times here and m times
 * there becomes their mean weighted n:m, a state another reached counts as seen. Log templates
 * are named by their text (a template's id is per run), and states by their features, so another
 * campaign's state is this campaign's state when its features are. A policy that keeps fault
 * sequences (`corpus`) shares those it kept itself too. What was taken, and from whom, is appended
 * to the run's `exchange.jsonl`.
 */
export const EXCHANGE_FORMAT = 'mallory-exchange';
/** What a run records of each import. */
export const EXCHANGE_LOG = 'exchange.jsonl';

/**
 * The largest snapshot read from the exchange: a file larger is not another campaign's (or not a
 * sane one) and is skipped with a warning, never read whole.
 */
export const MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024;

/**
 * Makes the exchange directory, and checks that this campaign can publish there — before the run
 * makes anything: a path that is a file, or that cannot be made or written, is refused in one line.
 */
export function prepareExchangeDir(dir: string): void {
  makeDirs(dir, '--exchange');
  const probe = join(dir, `.probe-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`);
  try {
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (e) {
    throw new UsageError(
      'bad-dir',
      `--exchange ${dir}: cannot write there (${errorCode(e)}): give a directory every campaign can write`,
    );
  }
}

type ReadSnapshot =
  | { readonly ok: true; readonly snapshot: unknown }
  | { readonly ok: false; readonly why: string | undefined };

/**
 * Reads one file of the exchange if it is a regular file no larger than {@link MAX_SNAPSHOT_BYTES}:
 * never follows a link, never waits on a FIFO or a device. `why` says why a file that is there was
 * not read (undefined for one that is gone or half-written: the next look reads it).
 */
function readSnapshotFile(path: string, size: number): ReadSnapshot {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = errorCode(e);
    return { ok: false, why: code === 'ENOENT' ? undefined : `cannot open it (${code})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, why: 'not a regular file' };
    if (stat.size > MAX_SNAPSHOT_BYTES || size > MAX_SNAPSHOT_BYTES) {
      return { ok: false, why: `larger than ${MAX_SNAPSHOT_BYTES} bytes` };
    }
    // One byte past the limit tells a file that grew since its stat.
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_SNAPSHOT_BYTES) + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === buffer.length) return { ok: false, why: 'it grew while it was read' };
    }
    return { ok: true, snapshot: JSON.parse(buffer.toString('utf8', 0, length)) };
  } catch {
    return { ok: false, why: undefined };
  } finally {
    closeSync(fd);
  }
}

export interface ExchangeSnapshot {
  readonly format: typeof EXCHANGE_FORMAT;
  readonly version: 1;
  /** `host:pid:run`: who published it. */
  readonly worker: string;
  readonly runDir: string;
  readonly system: string;
  readonly policy: string;
  /** Schedules ended when it was written. */
  readonly schedules: number;
  readonly at: string;
  readonly templates: readonly { readonly id: string; readonly tokens: readonly string[] }[];
  /** The policy's rows, with the visits this campaign made (what it took from others left out). */
  readonly values: readonly PolicyValue[];
  /** The states this campaign reached, with their features and visits. */
  readonly states: readonly {
    readonly abstraction: string;
    readonly id: string;
    readonly features: readonly string[];
    readonly visits: number;
  }[];
  /** The fault sequences its policy kept from its own schedules (the `corpus` policy's). */
  readonly sequences?: readonly SharedSequence[];
}

/** One import from one other campaign. */
export interface ExchangeImport {
  readonly schedule: number;
  readonly at: string;
  readonly from: string;
  readonly runDir: string;
  /** Rows of the policy merged, and the visits they brought. */
  readonly values: number;
  readonly visits: number;
  readonly states: number;
  readonly templates: number;
  /** Kept fault sequences new here. */
  readonly sequences: number;
}

export interface ExchangeParts {
  readonly dir: string;
  readonly runDir: string;
  readonly runId: string;
  readonly system: string;
  readonly policy: Policy;
  /** The abstraction the policy's states are of. */
  readonly policyAbstraction: string;
  readonly coverage: Coverage;
  readonly drain: Drain;
  /** The states this campaign reached itself (those it took from others left out), with their visits. */
  readonly ownStates: () => ExchangeSnapshot['states'];
  /** Says what the exchange could not do (the run goes on without it), once per cause. */
  readonly warn?: (line: string) => void;
}

/** The states a run stored (every one it reached itself), as an exchange publishes them. */
export function storedStates(runDir: string, policy: string): ExchangeSnapshot['states'] {
  if (!existsSync(join(runDir, 'run.db'))) return [];
  return readStoredSeed(runDir, policy).states.map((s) => ({
    abstraction: s.abstraction,
    id: s.id,
    features: JSON.parse(s.features) as string[],
    visits: s.visits,
  }));
}

function key(state: string, action: string): string {
  return `${state}\u0000${action}`;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_');
}

/** What this campaign took from one other so far: visits per value row and per state. */
interface Taken {
  readonly values: Map<string, number>;
  readonly states: Map<string, number>;
  schedules: number;
}

export class Exchange {
  readonly worker: string;
  private readonly file: string;
  private readonly taken = new Map<string, Taken>();
  /** Each other file's inode and modification time when it was last read. */
  private readonly seen = new Map<string, string>();
  /** Visits of each value row that came from others: left out of what this campaign publishes. */
  private readonly imported = new Map<string, number>();
  /** What was warned about already (a file skipped, publishing failing): said once each. */
  private readonly warned = new Set<string>();

  constructor(private readonly parts: ExchangeParts) {
    this.worker = `${hostname()}:${process.pid}:${parts.runId}`;
    this.file = join(parts.dir, `${safeName(this.worker)}.json`);
    makeDirs(parts.dir, '--exchange');
  }

  private warnOnce(key: string, line: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.parts.warn?.(line);
  }

  /**
   * Writes what this campaign learned itself, whole or not at all. A directory that cannot be
   * written (made read-only, removed) costs the others this campaign's news, not the campaign: it
   * is said once, and the next schedule tries again.
   */
  publish(schedules: number): void {
    try {
      this.write(schedules);
      this.warned.delete('publish');
    } catch (e) {
      this.warnOnce(
        'publish',
        `exchange: cannot publish to ${this.parts.dir} (${errorCode(e)}): the other campaigns do not get what this one learns until it can`,
      );
    }
  }

  private write(schedules: number): void {
    const { policy, runDir, system, drain, ownStates } = this.parts;
    const values: PolicyValue[] = [];
    for (const v of policy.save()) {
      const own = v.visits - (this.imported.get(key(v.state, v.action)) ?? 0);
      if (own > 0) values.push({ ...v, visits: own });
    }
    const snapshot: ExchangeSnapshot = {
      format: EXCHANGE_FORMAT,
      version: 1,
      worker: this.worker,
      runDir,
      system,
      policy: policy.name,
      schedules,
      at: new Date().toISOString(),
      templates: drain.templates().map((t) => ({ id: t.id, tokens: t.tokens })),
      values,
      states: ownStates(),
      sequences: policy.sequences?.() ?? [],
    };
    const tmp = `${this.file}.tmp-${randomUUID().slice(0, 8)}`;
    writeFileSync(tmp, JSON.stringify(snapshot));
    renameSync(tmp, this.file);
  }

  /** The other campaigns' snapshots of this system and policy, as published now. */
  private others(): ExchangeSnapshot[] {
    const out: ExchangeSnapshot[] = [];
    let names: string[];
    try {
      names = readdirSync(this.parts.dir);
    } catch (e) {
      this.warnOnce(
        'list',
        `exchange: cannot read ${this.parts.dir} (${errorCode(e)}): nothing taken from the others`,
      );
      return out;
    }
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const path = join(this.parts.dir, name);
      if (path === this.file) continue;
      let changed: string;
      let size: number;
      try {
        // A file unchanged since the last look holds nothing new: not read again.
        // A publish renames a new file into place: a new inode, whatever the clock's grain.
        const stat = lstatSync(path);
        changed = `${stat.ino}:${stat.mtimeMs}`;
        size = stat.size;
      } catch {
        continue;
      }
      if (this.seen.get(path) === changed) continue;
      const read = readSnapshotFile(path, size);
      if (!read.ok) {
        if (read.why !== undefined) {
          this.seen.set(path, changed);
          this.warnOnce(`skip:${path}:${changed}`, `exchange: skipped ${path}: ${read.why}`);
        }
        continue;
      }
      this.seen.set(path, changed);
      const snapshot = read.snapshot as Partial<ExchangeSnapshot> | null;
      if (typeof snapshot !== 'object' || snapshot === null) continue;
      if (snapshot.format !== EXCHANGE_FORMAT || snapshot.worker === this.worker) continue;
      if (snapshot.system !== this.parts.system || snapshot.policy !== this.parts.policy.name) continue;
      const { templates, values, states } = snapshot;
      if (!Array.isArray(templates) || !Array.isArray(values) || !Array.isArray(states)) {
        this.warnOnce(`skip:${path}:${changed}`, `exchange: skipped ${path}: not a whole snapshot`);
        continue;
      }
      out.push(snapshot as ExchangeSnapshot);
    }
    return out.sort((a, b) => a.worker.localeCompare(b.worker));
  }

  /**
   * Takes what the others published since this campaign last looked: their templates adopted by
   * text, their states seeded by features, their values merged by visits. Appends each import to
   * the run's `exchange.jsonl` and returns them.
   */
  pull(schedule: number): ExchangeImport[] {
    const { coverage, drain, policy, policyAbstraction, runDir } = this.parts;
    const imports: ExchangeImport[] = [];
    for (const snapshot of this.others()) {
      let taken = this.taken.get(snapshot.worker);
      if (taken !== undefined && taken.schedules >= snapshot.schedules) continue;
      taken ??= { values: new Map(), states: new Map(), schedules: 0 };
      this.taken.set(snapshot.worker, taken);
      taken.schedules = snapshot.schedules;
      // Their template ids → ours, by text.
      const ids = new Map<string, string>();
      const known = drain.templates().length;
      for (const t of snapshot.templates) ids.set(t.id, drain.adopt(t.tokens));
      const templates = drain.templates().length - known;
      // Their states → ours, by features: every state is mapped, only new visits are added.
      const stateIds = new Map<string, string>();
      let states = 0;
      for (const s of snapshot.states) {
        const features = [...new Set(s.features.map((f) => renameTemplateIds(f, ids)))].sort();
        const stateKey = key(s.abstraction, s.id);
        const delta = s.visits - (taken.states.get(stateKey) ?? 0);
        const local = coverage.seed(s.abstraction, s.id, features, Math.max(delta, 0));
        if (local !== undefined && s.abstraction === policyAbstraction) stateIds.set(s.id, local);
        if (delta > 0) {
          taken.states.set(stateKey, s.visits);
          states++;
        }
      }
      const merged: PolicyValue[] = [];
      let visits = 0;
      for (const v of snapshot.values) {
        const valueKey = key(v.state, v.action);
        const delta = v.visits - (taken.values.get(valueKey) ?? 0);
        if (delta <= 0) continue;
        taken.values.set(valueKey, v.visits);
        const state = stateIds.get(v.state) ?? v.state;
        merged.push({ state, action: v.action, value: v.value, visits: delta });
        const localKey = key(state, v.action);
        this.imported.set(localKey, (this.imported.get(localKey) ?? 0) + delta);
        visits += delta;
      }
      policy.merge?.(merged);
      const sequences = policy.adoptSequences?.(snapshot.sequences ?? []) ?? 0;
      if (merged.length === 0 && states === 0 && templates === 0 && sequences === 0) continue;
      const record: ExchangeImport = {
        schedule,
        at: new Date().toISOString(),
        from: snapshot.worker,
        runDir: snapshot.runDir,
        values: merged.length,
        visits,
        states,
        templates,
        sequences,
      };
      appendFileSync(join(runDir, EXCHANGE_LOG), JSON.stringify(record) + '\n');
      imports.push(record);
    }
    return imports;
  }
}

/** `exchange: took 12 policy values (40 visits), 5 states, 2 log templates from 2 campaigns`. */
export function describeImports(imports: readonly ExchangeImport[]): string {
  const sum = (f: (i: ExchangeImport) => number): number => imports.reduce((n, i) => n + f(i), 0);
  const n = imports.length;
  const sequences = sum((i) => i.sequences);
  return `exchange: took ${sum((i) => i.values)} policy values (${sum((i) => i.visits)} visits), ${sum((i) => i.states)} states, ${sum((i) => i.templates)} log templates${sequences > 0 ? `, ${sequences} fault sequences` : ''} from ${n} campaign${n === 1 ? '' : 's'} (${imports.map((i) => i.from).join(', ')})`;
}
