import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import { runVerdict, scheduleVerdicts, type Valid } from '../core/verdict.js';
import { type ReplayOf, replayOfConfig } from '../store/replay-of.js';
import { notARunReason, readStoredRun, type StoredRun } from '../store/run-reader.js';
import { escapeXml } from './plot.js';

/** One row of the store index. */
export interface IndexedRun {
  readonly dir: string;
  readonly run: StoredRun['run'];
  readonly schedules: number;
  readonly faults: number;
  /** One per root cause, with how many schedules found it. */
  readonly bugs: readonly { readonly kind: string; readonly name: string; readonly hits: number }[];
  readonly report: string | undefined;
  /** The run's verdict, its schedules' merged as Jepsen's `:valid?` (unknown when none was checked). */
  readonly verdict: Valid;
  /** The bug this run is a replay or shrink try of; absent for a campaign (and runs stored before). */
  readonly replayOf?: ReplayOf;
}

/** The runs under `store/<system>/<run>/`, newest first; unreadable directories are left out. */
export function listRuns(storeDir: string): IndexedRun[] {
  const root = resolve(storeDir);
  if (!existsSync(root)) return [];
  const runs: IndexedRun[] = [];
  for (const system of readdirSync(root, { withFileTypes: true })) {
    if (!system.isDirectory()) continue;
    for (const entry of readdirSync(join(root, system.name), { withFileTypes: true })) {
      const dir = join(root, system.name, entry.name);
      if (!entry.isDirectory() || notARunReason(dir) !== undefined) continue;
      let stored: StoredRun;
      try {
        stored = readStoredRun(dir);
      } catch {
        continue; // a run whose database is not readable yet (being created) or damaged
      }
      const report = join(dir, 'report.html');
      const replayOf = replayOfConfig(stored.run.config);
      runs.push({
        dir,
        run: stored.run,
        schedules: stored.schedules.length,
        faults: stored.faults.filter((f) => f.outcome === 'ok').length,
        bugs: stored.bugs.map((b) => ({ kind: b.kind, name: b.name, hits: b.hits.length })),
        report: existsSync(report) ? report : undefined,
        verdict: runVerdict(
          stored.schedules.flatMap((s) => (s.verdicts === null ? [] : [scheduleVerdicts(s.idx, s.verdicts)])),
        ).valid,
        ...(replayOf !== undefined ? { replayOf } : {}),
      });
    }
  }
  return runs.sort((a, b) => b.run.startedAt.localeCompare(a.run.startedAt));
}

function durationOf(run: StoredRun['run']): string {
  if (run.endedAt === null) return '—';
  const s = Math.round((Date.parse(run.endedAt) - Date.parse(run.startedAt)) / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/** Whether a try found its bug again (the same kind and name). */
export function reproduced(run: IndexedRun): boolean {
  const finding = run.replayOf?.finding;
  return finding !== undefined && run.bugs.some((b) => b.kind === finding.kind && b.name === finding.name);
}

/** The store's runs as the index shows them: campaigns, each with the tries of its bugs. */
export interface StoreTree {
  /** Campaigns (and runs stored before tries were marked), newest first. */
  readonly campaigns: readonly IndexedRun[];
  /** The replay and shrink tries of each campaign's bugs, by campaign dir, then bug dir, oldest first. */
  readonly tries: ReadonlyMap<string, ReadonlyMap<string, readonly IndexedRun[]>>;
  /** Tries of bugs whose run is not in this store (or was deleted), newest first. */
  readonly orphans: readonly IndexedRun[];
}

/** Sorts the runs into campaigns and the tries of their bugs. */
export function storeTree(runs: readonly IndexedRun[]): StoreTree {
  const campaigns = runs.filter((r) => r.replayOf === undefined);
  const known = new Set(campaigns.map((r) => resolve(r.dir)));
  const tries = new Map<string, Map<string, IndexedRun[]>>();
  const orphans: IndexedRun[] = [];
  for (const r of [...runs].reverse()) {
    const of = r.replayOf;
    if (of === undefined) continue;
    if (of.run === undefined || !known.has(resolve(of.run))) {
      orphans.unshift(r);
      continue;
    }
    const byBug = tries.get(resolve(of.run)) ?? new Map<string, IndexedRun[]>();
    tries.set(resolve(of.run), byBug);
    byBug.set(of.bugDir, [...(byBug.get(of.bugDir) ?? []), r]);
  }
  return { campaigns, tries, orphans };
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** One line for a bug's tries: how many of each kind, and how many found the bug again. */
function describeTries(runs: readonly IndexedRun[]): string {
  const parts: string[] = [];
  for (const kind of ['replay', 'shrink'] as const) {
    const mine = runs.filter((r) => r.replayOf?.kind === kind);
    if (mine.length === 0) continue;
    const candidates = new Set(mine.map((r) => r.replayOf?.candidate));
    parts.push(
      `${plural(mine.length, `${kind} try`, `${kind} tries`)}${kind === 'shrink' ? ` over ${plural(candidates.size, 'candidate')}` : ''}, ${mine.filter(reproduced).length} reproduced`,
    );
  }
  return parts.join('; ');
}

function verdictText(valid: Valid): string {
  return valid === true ? 'valid' : valid === false ? 'invalid' : 'unknown';
}

/** How the index page is read: as a file beside the runs, or served (`mallory serve`). */
export interface StoreIndexOptions {
  /** Link each run's directory (a served store lists it); a file on disk names it only. */
  readonly linkRunDirs?: boolean;
}

/**
 * The store's index page: every campaign in the store, newest first, with its outcome, its verdict
 * and a link to its report (or the command that writes one); under a campaign, the replay and
 * shrink tries of each of its bugs (folded), not as campaigns of their own. Links are relative to
 * the store, so the page works beside the runs and served from the store's root.
 */
export function storeIndexPage(
  storeDir: string,
  options: StoreIndexOptions = {},
): { readonly page: string; readonly runs: readonly IndexedRun[] } {
  const root = resolve(storeDir);
  const runs = listRuns(root);
  const tree = storeTree(runs);
  const runLink = (r: IndexedRun): string => {
    const rel = escapeXml(relative(root, r.dir));
    return options.linkRunDirs === true ? `<a href="${rel}/">${rel}</a>` : rel;
  };
  const reportLink = (r: IndexedRun): string =>
    r.report !== undefined
      ? `<a href="${escapeXml(relative(root, r.report))}">report</a>`
      : `<code>mallory report ${escapeXml(r.dir)}</code>`;
  const verdictCell = (r: IndexedRun): string =>
    `<td class="verdict-${verdictText(r.verdict)}">${verdictText(r.verdict)}</td>`;
  const found = (r: IndexedRun): string =>
    r.bugs.length === 0
      ? '0'
      : `${r.bugs.length}: ${escapeXml(r.bugs.map((b) => `${b.kind}/${b.name}${b.hits > 1 ? ` (${b.hits} hits)` : ''}`).join(', '))}`;
  const tryRow = (r: IndexedRun, withBug: boolean): string => {
    const of = r.replayOf!;
    const what = `${of.kind}${of.candidate !== undefined ? ` of candidate ${of.candidate}` : ''}, try ${of.try + 1}`;
    const bug = withBug ? `<td>${escapeXml(of.bugDir)}</td>` : '';
    return `<tr class="try">${bug}<td>${escapeXml(what)}</td><td>${runLink(r)}</td><td>${escapeXml(r.run.startedAt)}</td><td>${durationOf(r.run)}</td><td class="status-${escapeXml(r.run.status)}">${escapeXml(r.run.status)}</td><td class="${reproduced(r) ? 'reproduced">reproduced' : 'not-reproduced">not reproduced'}</td><td>${found(r)}</td><td>${reportLink(r)}</td></tr>`;
  };
  const TRY_HEAD =
    '<th>try</th><th>run</th><th>started</th><th>duration</th><th>status</th><th>the bug</th><th>bugs</th><th>report</th>';
  const COLUMNS = 12;
  const rows = tree.campaigns.flatMap((r) => {
    const row = `<tr class="campaign"><td>${escapeXml(r.run.system)}</td><td>${runLink(r)}</td><td>${escapeXml(r.run.startedAt)}</td><td>${durationOf(r.run)}</td><td class="status-${escapeXml(r.run.status)}">${escapeXml(r.run.status)}</td>${verdictCell(r)}<td>${escapeXml(r.run.policy)}</td><td>${r.run.seed}</td><td>${r.schedules}</td><td>${r.faults}</td><td>${found(r)}</td><td>${reportLink(r)}</td></tr>`;
    const byBug = tree.tries.get(resolve(r.dir));
    if (byBug === undefined) return [row];
    const nested = [...byBug.entries()].map(([bugDir, tries]) => {
      const of = tries[0].replayOf!;
      const bug = `bug ${of.bug !== undefined ? `#${of.bug} ` : ''}(${of.finding.kind}/${of.finding.name})`;
      return `<tr class="tries"><td></td><td colspan="${COLUMNS - 1}"><details><summary>${escapeXml(`${bug}: ${describeTries(tries)}`)} — <code>${escapeXml(relative(root, bugDir))}</code></summary><table><tr>${TRY_HEAD}</tr>\n${tries.map((t) => tryRow(t, false)).join('\n')}\n</table></details></td></tr>`;
    });
    return [row, ...nested];
  });
  const orphans =
    tree.orphans.length === 0
      ? ''
      : `<h2>Replay and shrink tries of bugs not in this store</h2>\n<table><tr><th>replay of</th>${TRY_HEAD}</tr>\n${tree.orphans.map((t) => tryRow(t, true)).join('\n')}\n</table>`;
  const tries = runs.length - tree.campaigns.length;
  const page = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Mallory runs</title>',
    '<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}th{background:#f4f4f4}tr.tries>td{border:none;padding:0 0 4px 0}tr.tries table{margin:2px 0 4px 1.5em}summary{cursor:pointer;color:#444}.reproduced{color:#c00000}.not-reproduced{color:#666}.status-complete{color:#2a7d2a}.status-error,.status-incomplete{color:#c00000}.status-interrupted,.status-running{color:#b36b00}.verdict-valid{color:#2a7d2a}.verdict-invalid{color:#c00000}.verdict-unknown{color:#b36b00}</style>',
    `</head><body><h1>Mallory runs in ${escapeXml(root)}</h1>`,
    runs.length === 0
      ? '<p>No runs yet: <code>mallory run</code> makes one.</p>'
      : `<p>${plural(tree.campaigns.length, 'campaign')}${tries > 0 ? `, and ${plural(tries, 'replay or shrink try', 'replay or shrink tries')} of their bugs, listed under the bug they replay` : ''}.</p>\n<table><tr><th>system</th><th>run</th><th>started</th><th>duration</th><th>status</th><th>verdict</th><th>policy</th><th>seed</th><th>schedules</th><th>faults</th><th>bugs</th><th>report</th></tr>\n${rows.join('\n')}\n</table>`,
    orphans,
    '</body></html>',
  ].join('\n');
  return { page, runs };
}

/**
 * Writes `<store>/index.html` (`storeIndexPage`, names of run dirs unlinked). Returns the page's
 * path and the runs listed.
 */
export function writeStoreIndex(storeDir: string): {
  readonly html: string;
  readonly runs: readonly IndexedRun[];
} {
  const root = resolve(storeDir);
  const { page, runs } = storeIndexPage(root);
  const html = join(root, 'index.html');
  // Whole or not at all: the workers of a fleet finish at once on one store.
  const tmp = `${html}.tmp-${process.pid}`;
  writeFileSync(tmp, page);
  renameSync(tmp, html);
  return { html, runs };
}
