import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import { notARunReason, readStoredRun, type StoredRun } from '../store/run-reader.js';
import { escapeXml } from './plot.js';

/** One row of the store index. */
export interface IndexedRun {
  readonly dir: string;
  readonly run: StoredRun['run'];
  readonly schedules: number;
  readonly faults: number;
  readonly bugs: readonly { readonly kind: string; readonly name: string }[];
  readonly report: string | undefined;
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
      runs.push({
        dir,
        run: stored.run,
        schedules: stored.schedules.length,
        faults: stored.faults.filter((f) => f.outcome === 'ok').length,
        bugs: stored.bugs.map((b) => ({ kind: b.kind, name: b.name })),
        report: existsSync(report) ? report : undefined,
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

/**
 * Writes `<store>/index.html`: every run in the store, newest first, with its outcome and a link to
 * its report (or the command that writes one). Returns the page's path and the runs listed.
 */
export function writeStoreIndex(storeDir: string): {
  readonly html: string;
  readonly runs: readonly IndexedRun[];
} {
  const root = resolve(storeDir);
  const runs = listRuns(root);
  const rows = runs.map((r) => {
    const rel = relative(root, r.dir);
    const bugs =
      r.bugs.length === 0
        ? '0'
        : `${r.bugs.length}: ${escapeXml([...new Set(r.bugs.map((b) => `${b.kind}/${b.name}`))].join(', '))}`;
    const link =
      r.report !== undefined
        ? `<a href="${escapeXml(relative(root, r.report))}">report</a>`
        : `<code>mallory report ${escapeXml(r.dir)}</code>`;
    return `<tr><td>${escapeXml(r.run.system)}</td><td>${escapeXml(rel)}</td><td>${escapeXml(r.run.startedAt)}</td><td>${durationOf(r.run)}</td><td class="status-${escapeXml(r.run.status)}">${escapeXml(r.run.status)}</td><td>${escapeXml(r.run.policy)}</td><td>${r.run.seed}</td><td>${r.schedules}</td><td>${r.faults}</td><td>${bugs}</td><td>${link}</td></tr>`;
  });
  const page = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Mallory runs</title>',
    '<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}th{background:#f4f4f4}.status-complete{color:#2a7d2a}.status-error,.status-incomplete{color:#c00000}.status-interrupted,.status-running{color:#b36b00}</style>',
    `</head><body><h1>Mallory runs in ${escapeXml(root)}</h1>`,
    runs.length === 0
      ? '<p>No runs yet: <code>mallory run</code> makes one.</p>'
      : `<table><tr><th>system</th><th>run</th><th>started</th><th>duration</th><th>status</th><th>policy</th><th>seed</th><th>schedules</th><th>faults</th><th>bugs</th><th>report</th></tr>\n${rows.join('\n')}\n</table>`,
    '</body></html>',
  ].join('\n');
  const html = join(root, 'index.html');
  // Whole or not at all: the workers of a fleet finish at once on one store.
  const tmp = `${html}.tmp-${process.pid}`;
  writeFileSync(tmp, page);
  renameSync(tmp, html);
  return { html, runs };
}
