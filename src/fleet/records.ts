import { randomUUID } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  linkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

import type { CompareRun } from '../campaign/compare.js';
import { UsageError } from '../core/errors.js';
import { makeDirs } from '../core/fs.js';
import type { Plan } from './plan.js';

/**
 * What the workers of a plan say about each index, in `<store>/plans/<id>/campaigns/`:
 * `<index>.json`, the index's record (running, done, failed, interrupted; its run dir and its
 * result), and `<index>.lock`, the claim of the worker running it now. A claim names its host
 * and pid and is renewed every few seconds (a heartbeat), so a worker on another host (a retried
 * pod) can tell a live claim from one a dead worker left.
 */
export const CAMPAIGNS_DIR = 'campaigns';

/** How often a worker renews its claim. */
export const HEARTBEAT_MS = 5_000;
/** A claim not renewed for this long is a dead worker's, whatever host it names. */
export const STALE_CLAIM_MS = 30_000;

export type IndexStatus = 'running' | 'done' | 'failed' | 'interrupted';

/** A finding as the fleet report dedupes it. */
export interface RecordedFinding {
  readonly kind: string;
  readonly name: string;
  /** Kind, name and the shape of the evidence (its fields, not their values). */
  readonly signature: string;
  readonly message: string;
  readonly schedule: number;
  readonly foundAtMs: number;
  /** The bug's directory (`<run>/bugs/<id>`). */
  readonly dir: string;
  /** How many schedules of its campaign found it (absent in records written before: one). */
  readonly hits?: number;
}

export interface IndexRecord {
  readonly index: number;
  readonly status: IndexStatus;
  /** 1 for the first worker to run the index, 2 for a retry, … */
  readonly attempt: number;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: string;
  readonly endedAt?: string;
  /** Absolute as read and written here; the file keeps it relative to the plan's folder. */
  readonly runDir?: string;
  /** The campaign's status as its summary gave it (`complete`, `interrupted`, `error`). */
  readonly runStatus?: string;
  /** The campaign's own time at its end (virtual on the simulator): where a miss is censored. */
  readonly elapsedMs?: number;
  /** What the fleet report compares, once done. */
  readonly result?: CompareRun;
  readonly findings?: readonly RecordedFinding[];
  readonly error?: string;
  /** Run dirs of earlier attempts that did not finish, removed when this attempt began. */
  readonly replaced?: readonly string[];
}

interface ClaimFile {
  readonly host: string;
  readonly pid: number;
  readonly token: string;
  readonly since: string;
  readonly beat: string;
}

/** How an error names the records' folder: `--plan: the plan's records in DIR: cannot create …`. */
const RECORDS_DIR_WHAT = "--plan: the plan's records in";

function campaignsDir(plan: Plan): string {
  return join(plan.dir, CAMPAIGNS_DIR);
}

function recordFile(plan: Plan, index: number): string {
  return join(campaignsDir(plan), `${index}.json`);
}

function lockFile(plan: Plan, index: number): string {
  return join(campaignsDir(plan), `${index}.lock`);
}

function writeAtomically(file: string, data: unknown): void {
  const tmp = `${file}.tmp-${process.pid}-${randomUUID().slice(0, 8)}`;
  writeFileSync(tmp, JSON.stringify(data, null, 2) + '\n');
  renameSync(tmp, file);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Whether `path` is `dir` or inside it. */
function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * A run's path as a record keeps it: relative to the plan's folder, so the store can be moved or
 * mounted anywhere (a pod's volume) and its records still name its own runs. A path outside the
 * store stays absolute.
 */
export function recordedPath(plan: Plan, path: string): string {
  const absolute = resolve(path);
  return inside(plan.storeDir, absolute) ? relative(plan.dir, absolute) || '.' : absolute;
}

/**
 * A path from a record, absolute for the store where the plan is now. Records written before
 * paths were relative hold absolute ones, made where the store was then: one outside the store
 * as it is now is found by its tail (`<system>/<run>/…`) under the store, never read at its old
 * place (a copy of a store would read the original's runs); one not found is named where it would
 * be under the store.
 */
export function resolveRecordedPath(plan: Plan, path: string): string {
  if (!isAbsolute(path)) return resolve(plan.dir, path);
  if (inside(plan.storeDir, path)) return path;
  const parts = path.split(sep).filter((p) => p !== '');
  for (let i = 1; i < parts.length; i++) {
    const moved = join(plan.storeDir, ...parts.slice(i));
    if (existsSync(moved)) return moved;
  }
  // Gone from this store: named where it would be, never at the old place.
  return join(plan.storeDir, ...parts.slice(-2));
}

/** Every run path of a record mapped by `map` (to write it relative, or read it absolute). */
function mapPaths(record: IndexRecord, map: (path: string) => string): IndexRecord {
  return {
    ...record,
    ...(record.runDir !== undefined ? { runDir: map(record.runDir) } : {}),
    ...(record.result !== undefined
      ? { result: { ...record.result, runDir: map(record.result.runDir) } }
      : {}),
    ...(record.findings !== undefined
      ? { findings: record.findings.map((f) => ({ ...f, dir: map(f.dir) })) }
      : {}),
    ...(record.replaced !== undefined ? { replaced: record.replaced.map(map) } : {}),
  };
}

/** A record as a worker wrote it (whole: records are renamed into place), or undefined. */
function readIndexRecord(plan: Plan, file: string): IndexRecord | undefined {
  const record = readJson(file);
  if (typeof record !== 'object' || record === null) return undefined;
  return mapPaths(record as IndexRecord, (path) => resolveRecordedPath(plan, path));
}

function readClaim(file: string): ClaimFile | undefined {
  return readJson(file) as ClaimFile | undefined;
}

/** The records of the plan's indices that have one. */
export function readRecords(plan: Plan): Map<number, IndexRecord> {
  const out = new Map<number, IndexRecord>();
  const dir = campaignsDir(plan);
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const m = /^(\d+)\.json$/.exec(name);
    if (!m) continue;
    const record = readIndexRecord(plan, join(dir, name));
    if (record !== undefined) out.set(Number(m[1]), record);
  }
  return out;
}

export function readRecord(plan: Plan, index: number): IndexRecord | undefined {
  return readIndexRecord(plan, recordFile(plan, index));
}

/** Writes an index's record, its run paths relative to the plan's folder (see {@link recordedPath}). */
export function writeRecord(plan: Plan, record: IndexRecord): void {
  makeDirs(campaignsDir(plan), RECORDS_DIR_WHAT);
  writeAtomically(
    recordFile(plan, record.index),
    mapPaths(record, (path) => recordedPath(plan, path)),
  );
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a claim is a live worker's: renewed lately, and on this host its pid still runs. */
function claimLive(claim: ClaimFile | undefined, now = Date.now()): claim is ClaimFile {
  if (claim === undefined) return false;
  const beat = Date.parse(claim.beat);
  if (!Number.isFinite(beat) || now - beat > STALE_CLAIM_MS) return false;
  return claim.host !== hostname() || pidAlive(claim.pid);
}

/** Who runs `index` now, if a live worker does. */
export function liveClaim(
  plan: Plan,
  index: number,
): { host: string; pid: number; since: string } | undefined {
  const claim = readClaim(lockFile(plan, index));
  return claimLive(claim) ? { host: claim.host, pid: claim.pid, since: claim.since } : undefined;
}

/** A worker's hold on one index, renewed until released. */
export interface Claim {
  /** Ends the heartbeat and removes the claim (if it is still this worker's). */
  release(): void;
  /** Whether another worker took the index over (this one's claim went stale). */
  lost(): boolean;
}

/**
 * Claims `index` for this process, or throws a one-line `UsageError` when a live worker holds it.
 * A dead worker's claim (its pid gone on this host, or not renewed for {@link STALE_CLAIM_MS}) is
 * taken over. `onLost` hears when another worker has taken this claim over (it went stale: this
 * worker stalled or lost the store): the index is that worker's now.
 */
export function claimIndex(plan: Plan, index: number, onLost?: () => void): Claim {
  const dir = campaignsDir(plan);
  makeDirs(dir, RECORDS_DIR_WHAT);
  const file = lockFile(plan, index);
  const now = new Date().toISOString();
  const mine: ClaimFile = { host: hostname(), pid: process.pid, token: randomUUID(), since: now, beat: now };
  const busy = (held: ClaimFile): UsageError =>
    new UsageError(
      'index-busy',
      `--plan: campaign ${index} of ${plan.file} is being run by pid ${held.pid} on ${held.host} (since ${held.since}): run another index, or stop that worker first`,
    );
  try {
    // Made whole, then linked into place: a link is made only where no claim is, and a reader
    // never sees a claim half-written (which it would take for a dead worker's).
    const tmp = `${file}.tmp-${process.pid}-${mine.token.slice(0, 8)}`;
    writeFileSync(tmp, JSON.stringify(mine) + '\n');
    try {
      linkSync(tmp, file);
    } finally {
      unlinkSync(tmp);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new UsageError(
        'bad-store',
        `--plan: cannot claim campaign ${index} in ${dir}: ${e instanceof Error ? e.message : String(e)}: make the store writable`,
      );
    }
    const held = readClaim(file);
    if (claimLive(held)) throw busy(held);
    // A dead worker's claim: take it over, then make sure no other taker won.
    writeAtomically(file, mine);
    const after = readClaim(file);
    if (after?.token !== mine.token && claimLive(after)) throw busy(after);
  }
  let lost = false;
  const timer = setInterval(() => {
    const current = readClaim(file);
    if (current?.token !== mine.token) {
      lost = true;
      clearInterval(timer);
      onLost?.();
      return;
    }
    try {
      writeAtomically(file, { ...mine, beat: new Date().toISOString() });
    } catch {
      // the store is briefly unwritable: the next beat tries again
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return {
    release() {
      clearInterval(timer);
      if (readClaim(file)?.token === mine.token) {
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      }
    },
    lost: () => lost,
  };
}
