import type { Event } from '../core/event.js';
import type { ParsedLogEvent, SystemAdapter } from '../systems/system.js';
import { Drain } from './drain.js';
import { roleOfText } from './role.js';

/**
 * Node log lines → internal events (source `log`). A system's own parser (`SystemAdapter.parseLog`)
 * names the events it knows, with numeric attributes; every other line is stripped of its
 * timestamp, level and JSON wrapper and mined by {@link Drain}: the template id is the type.
 * Lines that announce a role change (`became leader`) get `attrs.role`, and the role is appended to
 * their type (`L5/leader`), since Drain folds such lines into one template.
 *
 * Usage (one instance per run, shared by all nodes so one log statement has one type):
 * ```ts
 * const logs = new LogEvents({ parseLog: adapter.parseLog?.bind(adapter) });
 * const tail = new FileTail(logPath, (line, ts) => {
 *   const e = logs.toEvent(node, line, ts);
 *   if (e) timeline.ingest(e);
 * });
 * ```
 */
export interface LogEventsOptions {
  readonly parseLog?: (line: string) => ParsedLogEvent | undefined;
  readonly drain?: Drain;
  /** Mine lines the parser does not know (default true). */
  readonly mineUnparsed?: boolean;
}

/** Messages shorter than this (after stripping) are noise, e.g. a lone `}`. */
const MIN_MESSAGE_CHARS = 2;
const MAX_PREFIX_PASSES = 4;

const PREFIXES: readonly RegExp[] = [
  // 2026-11-29T08:19:35.123Z, [2026-11-29 08:19:35,123], 2026-11-29 08:19:35.123+00:00
  /^\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}:\d{1,2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s*/,
  // Go log: 2026/11/29 08:19:35.123456
  /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?\s*/,
  // Redis: 12345:M 29 Nov 2026 08:19:35.123 *
  /^\d+:[XCSM] \d{1,2} \w{3} \d{4} \d{2}:\d{2}:\d{2}\.\d+ [.\-*#] /,
  // glog: I1129 08:19:35.123456   12345 file.go:12]
  /^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w./-]+:\d+\] /,
  // time of day, epoch seconds/ms/ns
  /^\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?\s+/,
  /^\[?\d{10,19}(?:\.\d+)?\]?\s+/,
  // levels: INFO, [warn], W:, level=info
  /^\[?(?:trace|debug|dbug|info|inf|notice|warn|warning|wrn|error|err|eror|fatal|panic|crit|critical)\]?:?\s+/i,
  /^(?:level|lvl)=\w+\s+/i,
];

/** The message of a log line: JSON logs give their `msg`, text logs lose leading time and level. */
export function logMessage(line: string): string {
  const trimmed = line.trim();
  if (trimmed.startsWith('{') && trimmed.endsWith('}')) {
    const msg = jsonMessage(trimmed);
    if (msg !== undefined) return msg;
  }
  let text = trimmed;
  for (let pass = 0; pass < MAX_PREFIX_PASSES; pass++) {
    const before = text;
    for (const re of PREFIXES) text = text.replace(re, '');
    if (text === before) break;
  }
  const logfmt = /(?:^|\s)msg="((?:[^"\\]|\\.)*)"/.exec(text);
  if (logfmt) return logfmt[1];
  return text;
}

function jsonMessage(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  for (const key of ['msg', 'message', 'M']) {
    const v = record[key];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

export class LogEvents {
  readonly drain: Drain;
  private readonly parseLog: ((line: string) => ParsedLogEvent | undefined) | undefined;
  private readonly mineUnparsed: boolean;

  constructor(options: LogEventsOptions = {}) {
    this.drain = options.drain ?? new Drain();
    this.parseLog = options.parseLog;
    this.mineUnparsed = options.mineUnparsed ?? true;
  }

  /** One line of `node`'s output, read at host time `ts` (ns), as an event; undefined for noise. */
  toEvent(node: string, line: string, ts: number): Event | undefined {
    const parsed = this.parseLog?.(line);
    if (parsed) {
      return parsed.attrs
        ? { ts, node, source: 'log', type: parsed.type, attrs: parsed.attrs }
        : { ts, node, source: 'log', type: parsed.type };
    }
    if (!this.mineUnparsed) return undefined;
    const message = logMessage(line);
    if (message.length < MIN_MESSAGE_CHARS) return undefined;
    const { id } = this.drain.add(message);
    const role = roleOfText(message);
    // Drain folds "became leader" and "became follower" into one template: the role keeps them apart.
    return role
      ? { ts, node, source: 'log', type: `${id}${ROLE_SEPARATOR}${role}`, attrs: { role } }
      : { ts, node, source: 'log', type: id };
  }
}

/** Between a mined template's id and the role its line names, in an event type (`L30/leader`). */
const ROLE_SEPARATOR = '/';

/** The mined template an event type names (`L30/leader` → `L30`, `L30` → `L30`), as `toEvent` writes it. */
export function templateIdOf(type: string): string {
  const at = type.indexOf(ROLE_SEPARATOR);
  return at < 0 ? type : type.slice(0, at);
}

/** The log events of a run of `system`: its own parser first, template mining for the rest. */
export function logEventsFor(system: Pick<SystemAdapter, 'parseLog'>): LogEvents {
  return new LogEvents(system.parseLog ? { parseLog: (line) => system.parseLog?.(line) } : {});
}
