import { readFileSync } from 'node:fs';

import { crashPatternsWith, GENERIC_CRASH_PATTERNS, matchLine } from '../check/logs.js';
import { UsageError } from '../core/errors.js';
import { logEventsFor } from '../observe/log-events.js';
import { loadSystem } from '../systems/load-system.js';
import type { ParsedLogEvent, SystemAdapter } from '../systems/system.js';
import type { LoadedSystem } from '../systems/load-system.js';
import { runOfFile } from './_internals/run-of-file.js';
import type { RegisterCommand } from './command.js';

/** What one log line gives a campaign of the system. */
export interface LogLineReport {
  /** 1-based line number. */
  readonly line: number;
  readonly text: string;
  /** The event the system's own log rules (`parseLog`) extract. */
  readonly event?: ParsedLogEvent;
  /** The template id the line is mined as when no rule knows it (`--all` only). */
  readonly mined?: string;
  readonly crash?: { readonly pattern: string; readonly generic: boolean };
  readonly membershipExit?: { readonly pattern: string };
}

export interface LogFileReport {
  readonly file: string;
  readonly lines: number;
  /** The lines that give an event or match a pattern (every line with `all`). */
  readonly matches: readonly LogLineReport[];
  /** Events by type, from the system's rules. */
  readonly events: Readonly<Record<string, number>>;
  readonly crashes: number;
  readonly membershipExits: number;
  /** Lines no rule knows, which a campaign mines as templates, and how many templates they make. */
  readonly mined: { readonly lines: number; readonly templates: number };
}

/**
 * Reads a node log as a campaign of `system` would: each line through the system's log rules
 * (then template mining), and through the crash and membership-exit patterns of the log check.
 */
export function analyseLog(system: SystemAdapter, file: string, text: string, all = false): LogFileReport {
  const logEvents = logEventsFor(system);
  const crashPatterns = crashPatternsWith(system.crashPatterns);
  const exitPatterns = system.membershipExitPatterns ?? [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const matches: LogLineReport[] = [];
  const events: Record<string, number> = {};
  let crashes = 0;
  let membershipExits = 0;
  let minedLines = 0;
  lines.forEach((text, i) => {
    const event = system.parseLog?.(text);
    const mined = event ? undefined : logEvents.toEvent('node', text, 0)?.type;
    if (event) events[event.type] = (events[event.type] ?? 0) + 1;
    if (mined !== undefined) minedLines++;
    const match = matchLine(text, crashPatterns, exitPatterns);
    if (match?.kind === 'crash-text') crashes++;
    if (match?.kind === 'membership-exit') membershipExits++;
    if (!event && !match && !all) return;
    matches.push({
      line: i + 1,
      text,
      ...(event ? { event } : {}),
      ...(mined !== undefined && all ? { mined } : {}),
      ...(match?.kind === 'crash-text'
        ? {
            crash: {
              pattern: String(match.pattern),
              generic: GENERIC_CRASH_PATTERNS.includes(match.pattern),
            },
          }
        : {}),
      ...(match?.kind === 'membership-exit' ? { membershipExit: { pattern: String(match.pattern) } } : {}),
    });
  });
  return {
    file,
    lines: lines.length,
    matches,
    events,
    crashes,
    membershipExits,
    mined: { lines: minedLines, templates: logEvents.drain.templates().length },
  };
}

const TEXT_WIDTH = 120;

function describeLine(r: LogLineReport): string {
  const what: string[] = [];
  if (r.event) {
    const attrs = Object.entries(r.event.attrs ?? {}).map(([k, v]) => `${k}=${v}`);
    what.push(`event ${[r.event.type, ...attrs].join(' ')}`);
  }
  if (r.mined !== undefined) what.push(`mined ${r.mined}`);
  if (r.crash) what.push(`CRASH ${r.crash.pattern}${r.crash.generic ? ' (generic)' : ''}`);
  if (r.membershipExit) what.push(`membership-exit ${r.membershipExit.pattern}`);
  const text = r.text.length > TEXT_WIDTH ? `${r.text.slice(0, TEXT_WIDTH)}…` : r.text;
  return `${String(r.line).padStart(6)}  ${(what.join('; ') || '-').padEnd(40)}  ${text}`;
}

export function formatLogReport(report: LogFileReport): string {
  const types = Object.entries(report.events)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${type} ×${n}`);
  const eventCount = Object.values(report.events).reduce((a, b) => a + b, 0);
  return [
    `${report.file}:`,
    ...report.matches.map(describeLine),
    `${report.lines} lines: ${eventCount} events from the system's log rules${types.length > 0 ? ` (${types.join(', ')})` : ''}; ` +
      `${report.crashes} crash match(es); ${report.membershipExits} membership exit(s); ` +
      `${report.mined.lines} other lines mined into ${report.mined.templates} template(s)`,
  ].join('\n');
}

interface LogsFlags {
  system?: string;
  json?: boolean;
  all?: boolean;
}

/** A crash pattern matched: a finding, as for every command. */
const EXIT_CRASH_MATCHED = 1;

/**
 * The system to read `file` as: `--system` when given, else the one recorded by the run the file
 * lies in (a node log under `store/<system>/<run>/nodes/`); else a one-line error saying to give it.
 */
function systemSpecFor(file: string, given: string | undefined): string {
  if (given !== undefined) return given;
  const run = runOfFile(file);
  if (run === undefined)
    throw new UsageError(
      'bad-args',
      `logs: ${file} is not inside a run directory, so which system wrote it is not recorded: give --system NAME|PATH`,
    );
  return run.system;
}

/**
 * `mallory logs [--system S] FILE…`: what a campaign of S reads in a node log — the events its log
 * rules extract, and the lines its crash patterns (and the generic ones) or membership-exit
 * patterns match — so an adapter's author can test the rules on real output.
 */
export const registerLogs: RegisterCommand = (program, setExit) => {
  program
    .command('logs')
    .description(
      "show the events a system's log rules extract from a node log, and its crash-pattern matches",
    )
    .argument('<file...>', 'node log files (a run keeps them as nodes/<n>/stdout.log and stderr.log)')
    .option(
      '--system <name|path>',
      "a built-in system or the path of a system module (default: the one the file's run recorded)",
    )
    .option('--all', 'list every line, with the template a campaign mines it as when no rule knows it')
    .option('--json', 'print the result as one JSON document on stdout')
    .action(async (files: string[], flags: LogsFlags) => {
      const systems = new Map<string, LoadedSystem>();
      const reports: LogFileReport[] = [];
      let first: LoadedSystem | undefined;
      for (const file of files) {
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (e) {
          throw new UsageError(
            'bad-file',
            `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`,
          );
        }
        const spec = systemSpecFor(file, flags.system);
        let loaded = systems.get(spec);
        if (loaded === undefined) {
          loaded = await loadSystem(spec).catch((e: unknown) => {
            throw flags.system === undefined && e instanceof UsageError
              ? new UsageError(
                  e.code,
                  `logs: ${file} is from a run of --system ${spec}, which cannot be loaded here (${e.message}): give --system NAME|PATH`,
                )
              : e;
          });
          systems.set(spec, loaded);
        }
        first ??= loaded;
        reports.push(analyseLog(loaded.definition.create({ bugs: [] }), file, text, flags.all === true));
      }
      if (flags.json && first !== undefined) {
        process.stdout.write(
          JSON.stringify({ system: first.definition.name, source: first.source, files: reports }, null, 2) +
            '\n',
        );
      } else {
        process.stdout.write(reports.map(formatLogReport).join('\n\n') + '\n');
      }
      setExit(reports.some((r) => r.crashes > 0) ? EXIT_CRASH_MATCHED : 0);
    });
};
