import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

import type { NodeExit } from '../cluster/cluster.js';

const SANITIZER_REPORT = /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer/;
const SEGFAULT = /[Ss]egmentation fault|core dumped/;

/**
 * Text that means a node broke memory safety: never a fail-stop, even while the nemesis makes its
 * disk answer errors (a failed fsync or a full disk must not corrupt memory).
 */
export const MEMORY_ERROR_PATTERNS: readonly RegExp[] = [SANITIZER_REPORT, SEGFAULT];

/** Signals by which a process stops on a memory or instruction fault, never by choice. */
const MEMORY_ERROR_SIGNALS: readonly NodeJS.Signals[] = ['SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE'];

/**
 * Crash text that reports a fatal signal or a bad memory access (a signal handler's report, Go's
 * runtime panic on a nil pointer): the signal's own report, never text the disk fault started.
 */
const SIGNAL_REPORT =
  /crashed by signal|\bSIG(?:SEGV|BUS|ILL|FPE)\b|signal (?:11|7|4|8)\b|invalid memory address|nil pointer dereference/i;

/** Text that means a node crashed or broke an internal invariant (the artifact's log patterns). */
export const GENERIC_CRASH_PATTERNS: readonly RegExp[] = [
  /\bpanic(?:ked)?:/,
  SANITIZER_REPORT,
  /Assertion [`'"].*[`'"] failed|assertion failed|ASSERTION FAILED/i,
  SEGFAULT,
  /\bfatal error:|\bFATAL\b/,
];

/** The files a node's output goes to, in the node's log dir. */
export const LOG_STREAMS: readonly string[] = ['stdout.log', 'stderr.log'];

/** The sizes of the log files in a node's log dir (0 for one not written yet). */
export function logSizes(dir: string): Record<string, number> {
  return Object.fromEntries(
    LOG_STREAMS.map((s) => {
      try {
        return [s, statSync(join(dir, s)).size];
      } catch {
        return [s, 0];
      }
    }),
  );
}

/**
 * The harness's doing an exit is put down to: a fault that made the node's disk answer errors (with,
 * when known, the sizes of the node's log files when that fault began), or the harness cutting the
 * node's open connections just before.
 */
export interface InducedCause {
  /**
   * The fault, as the history and terminal say it: for a disk, what was in effect on it (as
   * `fsync-error`); for a connection cut, the words that follow "stopped (code 1)".
   */
  readonly cause: string;
  /** The disk fault in effect (`disk-full`, `fsync-error`), when a disk's. */
  readonly diskFault?: string;
  readonly fromBytes?: Readonly<Record<string, number>>;
  /**
   * `disk` (the default): a fail-stop, so the crash text the process wrote since the fault began
   * is the exit's evidence. `connection-cut`: a node that gives up on a connection the harness
   * reset (a program that exits when its start-up call fails); a process that wrote crash text is
   * not excused, and the text stays a finding — a reset connection excuses no crash.
   */
  readonly by?: 'disk' | 'connection-cut';
  /**
   * The log sizes when the fault's grace after its heal ended: output begun before them may be the
   * fault's doing. Absent while the fault or its grace lasts.
   */
  readonly untilBytes?: Readonly<Record<string, number>>;
}

/** Every pattern the log check treats as a crash: the generic ones, then the system's own. */
export function crashPatternsWith(systemPatterns: readonly RegExp[]): readonly RegExp[] {
  return [...GENERIC_CRASH_PATTERNS, ...systemPatterns];
}

/** What one output line tells the log check, and the pattern that says so. */
export interface LineMatch {
  readonly kind: 'crash-text' | 'membership-exit';
  readonly pattern: RegExp;
}

/**
 * Classifies one line of a node's output: a membership exit pattern wins (the harness's doing,
 * never a finding), else the first crash pattern that matches, else undefined.
 */
export function matchLine(
  line: string,
  crashPatterns: readonly RegExp[],
  membershipExitPatterns: readonly RegExp[],
): LineMatch | undefined {
  const leaving = membershipExitPatterns.find((p) => p.test(line));
  if (leaving) return { kind: 'membership-exit', pattern: leaving };
  const crash = crashPatterns.find((p) => p.test(line));
  return crash ? { kind: 'crash-text', pattern: crash } : undefined;
}

/**
 * A crash found in a node's output or exit — or no finding, the harness's doing, which the
 * campaign records: as `membership-exit`, a node that stopped because of its membership, which
 * the harness changes (see `SystemAdapter.membershipExitPatterns`; it excuses the exit only, crash
 * text in the output is a `crash-text` finding all the same); as `induced-exit`, a node that
 * stopped while the nemesis made its disk answer errors (or just after it healed them): fail-stop
 * on a failed fsync or a full disk is a legitimate reaction, so the crash text its process wrote
 * from the fault's start to its exit (its own fatal line, a panic) is the exit's evidence, not a
 * finding — unless it shows a memory error (a sanitizer's report, a segfault), which no failed
 * call excuses, as no exit by SIGSEGV, SIGBUS, SIGILL or SIGFPE is induced, with one exception:
 * a process that died so while writing the crash report the fault made it start (its crash text
 * began after the fault and before the signal, and none of it reports a signal or a memory
 * error), as redis does when the memory test of its panic report faults. A process the nemesis
 * killed under such a fault is the same `induced-exit` when it had written crash text since the
 * fault began: it was stopping itself as the kill came. Also `induced-exit`: a node that stopped
 * just after the harness cut its open connections (see `NetworkBackend.connectionCuts`), when its
 * process exited by itself with a code below 128 and wrote no crash text (a signal, an abort or
 * the kernel's OOM kill, is never a reset connection's doing). As `stop-exit`, a node that ended with the signal that stopped the run
 * (sent to every process of the run at once, as Ctrl-C to a process group or Slurm's `scancel` does).
 */
export interface LogFinding {
  readonly node: string;
  readonly kind: 'crash-text' | 'unexpected-exit' | 'membership-exit' | 'induced-exit' | 'stop-exit';
  readonly message: string;
  /** The lines that show it, with the node's last lines before it. */
  readonly lines: readonly string[];
  /** An induced exit's disk fault (`disk-full`: the process died while its writes were refused). */
  readonly diskFault?: string;
  /** An exit's time (monotonic ns, as `NodeExit.ts`). */
  readonly ts?: number;
}

/** A line of crash text, kept until the exits of the same scan say whether it announced an induced one. */
interface CrashLine {
  readonly stream: string;
  /** Its byte offset in its file, and the offset just past it. */
  readonly start: number;
  readonly end: number;
  readonly line: string;
  readonly memoryError: boolean;
  readonly finding: LogFinding;
}

interface LeavingLine {
  readonly stream: string;
  /** The byte offset just past the line in its file. */
  readonly end: number;
  readonly line: string;
}

const CONTEXT_LINES = 20;
const MAX_READ_BYTES = 8 * 1024 * 1024;
/** How far back before an exit to look for its last lines. */
const EXIT_CONTEXT_BYTES = 64 * 1024;

/**
 * The log check: reads what each node wrote since the last call and reports crash text, and turns
 * exits that nothing we did caused into findings with the node's last lines.
 */
export class LogCheck {
  private readonly offsets = new Map<string, number>();
  private readonly tails = new Map<string, string[]>();
  private readonly patterns: readonly RegExp[];
  /** Per node, lines by which it said it stops because of its membership, until that exit. */
  private readonly leaving = new Map<string, LeavingLine[]>();

  constructor(
    private readonly runDir: string,
    systemPatterns: readonly RegExp[],
    private readonly membershipExitPatterns: readonly RegExp[] = [],
  ) {
    this.patterns = crashPatternsWith(systemPatterns);
  }

  /**
   * Scans new output of `nodes`; `exits` are the node exits seen since the last call.
   * `inducedBy` names the fault in effect on the node's disk that an exit is put down to (as
   * `fsync-error`), if any: that exit is `induced-exit`, not `unexpected-exit`, and the crash text
   * its process wrote since the fault began is its evidence, not a `crash-text` finding; an exit
   * the nemesis asked for is one only when its process had written such text (the classifier is
   * asked for it only then).
   * `stoppedBy` names the run's stop signal an exit is put down to, if any: that exit is `stop-exit`.
   * `reportCauses` names the faults on the node's disk a crash report may have begun in, for an
   * exit by a memory fault's signal or one after the fault's grace (a fault whose window ended up
   * to `CRASH_REPORT_MAX_MS` before).
   */
  scan(
    nodes: readonly string[],
    exits: readonly NodeExit[],
    inducedBy: (exit: NodeExit) => InducedCause | undefined = () => undefined,
    stoppedBy: (exit: NodeExit) => NodeJS.Signals | undefined = () => undefined,
    reportCauses: (exit: NodeExit) => readonly InducedCause[] = () => [],
  ): LogFinding[] {
    const crashes = new Map<string, CrashLine[]>();
    for (const node of nodes) {
      for (const stream of LOG_STREAMS) {
        const file = join(this.runDir, 'nodes', node, stream);
        const { lines, start } = this.readNew(file);
        const tail = this.tails.get(file) ?? [];
        let end = start;
        for (const line of lines) {
          end += Buffer.byteLength(line) + 1;
          tail.push(line);
          if (tail.length > CONTEXT_LINES) tail.shift();
          const match = matchLine(line, this.patterns, this.membershipExitPatterns);
          if (match?.kind === 'membership-exit') {
            this.leaving.set(node, [...(this.leaving.get(node) ?? []), { stream, end, line }]);
          } else if (match) {
            const finding: LogFinding = {
              node,
              kind: 'crash-text',
              message: `${node} ${stream}: ${line.slice(0, 300)}`,
              lines: [...tail],
            };
            const start = end - Buffer.byteLength(line) - 1;
            const memoryError = MEMORY_ERROR_PATTERNS.some((p) => p.test(line));
            crashes.set(node, [
              ...(crashes.get(node) ?? []),
              { stream, start, end, line, memoryError, finding },
            ]);
          }
        }
        this.tails.set(file, tail);
      }
    }
    const exitFindings: LogFinding[] = [];
    /** Per node, the log sizes at its last exit in this scan: where its next process's lines start. */
    const previousExit = new Map<string, Readonly<Record<string, number>>>();
    for (const exit of exits) {
      const since = previousExit.get(exit.node);
      if (exit.logBytes) previousExit.set(exit.node, exit.logBytes);
      // The lines the exited process wrote: before the log sizes at its exit (a node's processes
      // append to the same files, and the nemesis may have killed an earlier one).
      const pending = this.leaving.get(exit.node) ?? [];
      const logBytes = exit.logBytes;
      const its = logBytes ? pending.filter((l) => l.end <= (logBytes[l.stream] ?? 0)) : pending;
      this.leaving.set(
        exit.node,
        pending.filter((l) => !its.includes(l)),
      );
      const reason = its[0]?.line;
      const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code ?? '?'}`;
      // The exited process's own last lines: up to the log sizes at its exit, not what a process
      // started since (the reset restarts nodes before the check) wrote after them.
      const lastLines = (): string[] =>
        LOG_STREAMS.flatMap((s) => {
          const file = join(this.runDir, 'nodes', exit.node, s);
          const end = logBytes?.[s];
          return end === undefined ? (this.tails.get(file) ?? []) : lastLinesOf(file, CONTEXT_LINES, end);
        });
      if (exit.expected) {
        // The nemesis stopped it, but it may have been stopping itself on its failing disk as the
        // kill came (its fatal line just before): that text is the fault's doing as well.
        const cause = crashes.has(exit.node) ? inducedBy(exit) : undefined;
        const induced = cause?.by === 'connection-cut' ? undefined : cause;
        const announced = induced ? takeAnnouncing(crashes, exit, [induced.fromBytes, since]) : [];
        if (induced !== undefined && announced.length > 0) {
          exitFindings.push({
            node: exit.node,
            kind: 'induced-exit',
            message: `${exit.node} stopped (${how}, the nemesis stopping it) while ${induced.cause} was in effect on its disk; it said: ${announced[0].line.slice(0, 300)}`,
            lines: [...new Set([...announced.map((c) => c.line), ...lastLines()])],
            ...(induced.diskFault !== undefined ? { diskFault: induced.diskFault, ts: exit.ts } : {}),
          });
        }
        continue;
      }
      const lines = lastLines();
      if (reason !== undefined) {
        exitFindings.push({
          node: exit.node,
          kind: 'membership-exit',
          message: `${exit.node} stopped (${how}) because of its membership: ${reason.slice(0, 300)}`,
          lines,
        });
        continue;
      }
      const stopSignal = stoppedBy(exit);
      if (stopSignal !== undefined) {
        exitFindings.push({
          node: exit.node,
          kind: 'stop-exit',
          message: `${exit.node} exited with the run's stop signal (${how}; the run got ${stopSignal})`,
          lines,
        });
        continue;
      }
      const memorySignal = exit.signal !== null && MEMORY_ERROR_SIGNALS.includes(exit.signal);
      const cause = inducedBy(exit);
      if (cause?.by === 'connection-cut' && gaveUp(exit) && !wroteCrashText(crashes, exit, since)) {
        exitFindings.push({
          node: exit.node,
          kind: 'induced-exit',
          message: `${exit.node} stopped (${how}) ${cause.cause}`,
          lines,
        });
        continue;
      }
      // A reset connection excuses no crash text and no memory fault: only a failing disk does.
      const induced = cause?.by === 'connection-cut' ? undefined : cause;
      if (memorySignal || induced === undefined) {
        // A memory fault is never induced, unless it struck while the process was already writing
        // the crash report the fault made it start (redis's panic report runs a memory test); an
        // exit after the fault's grace is induced when the process was writing that report since
        // (the memory test outlasted the grace).
        const causes = [...(induced !== undefined ? [induced] : []), ...reportCauses(exit)];
        const found = causes
          .map((cause) => ({ cause, report: reportUnderway(crashes, exit, cause, since) }))
          .find((r) => r.report !== undefined);
        if (found?.report !== undefined) {
          exitFindings.push({
            node: exit.node,
            kind: 'induced-exit',
            message: `${exit.node} stopped (${how}) while writing the crash report that ${found.cause.cause} on its disk made it start; it said: ${found.report[0].line.slice(0, 300)}`,
            lines: [...new Set([...found.report.map((c) => c.line), ...lines])],
            ...(found.cause.diskFault !== undefined ? { diskFault: found.cause.diskFault, ts: exit.ts } : {}),
          });
          continue;
        }
      }
      if (induced !== undefined && !memorySignal) {
        const announced = takeAnnouncing(crashes, exit, [induced.fromBytes, since]);
        const said = announced.length > 0 ? `; it said: ${announced[0].line.slice(0, 300)}` : '';
        exitFindings.push({
          node: exit.node,
          kind: 'induced-exit',
          message: `${exit.node} stopped (${how}) while ${induced.cause} was in effect on its disk${said}`,
          lines: [...new Set([...announced.map((c) => c.line), ...lines])],
          ...(induced.diskFault !== undefined ? { diskFault: induced.diskFault, ts: exit.ts } : {}),
        });
        continue;
      }
      exitFindings.push({
        node: exit.node,
        kind: 'unexpected-exit',
        message: `${exit.node} exited by itself (${how})`,
        lines,
      });
    }
    return [...[...crashes.values()].flat().map((c) => c.finding), ...exitFindings];
  }

  /** The complete lines written since the last read, and the byte offset of the first. */
  private readNew(file: string): { lines: string[]; start: number } {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return { lines: [], start: 0 };
    }
    try {
      const size = fstatSync(fd).size;
      let offset = this.offsets.get(file) ?? 0;
      if (size < offset) offset = 0;
      const length = Math.min(size - offset, MAX_READ_BYTES);
      if (length <= 0) return { lines: [], start: offset };
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, offset);
      const text = buffer.toString('utf8');
      const end = text.lastIndexOf('\n');
      if (end < 0) return { lines: [], start: offset };
      this.offsets.set(file, offset + Buffer.byteLength(text.slice(0, end + 1)));
      return { lines: text.slice(0, end).split('\n'), start: offset };
    } finally {
      closeSync(fd);
    }
  }
}

/** A process that ended on signal n reports 128 + n when it (or the shell that ran it) exits. */
const SIGNAL_EXIT_BASE = 128;

/**
 * Whether `exit` is a process giving up by itself (an exit code below 128): what a reset
 * connection may make a program do. A signal (an abort, the kernel's OOM kill, a fault's), or a
 * shell's 128 + n for one, is no giving up, and a reset connection excuses none of them.
 */
function gaveUp(exit: NodeExit): boolean {
  return exit.signal === null && exit.code !== null && exit.code < SIGNAL_EXIT_BASE;
}

/** Whether the process that made `exit` wrote crash text: after `since` (the node's previous exit) up to its exit. */
function wroteCrashText(
  crashes: ReadonlyMap<string, readonly CrashLine[]>,
  exit: NodeExit,
  since: Readonly<Record<string, number>> | undefined,
): boolean {
  return (crashes.get(exit.node) ?? []).some(
    (c) => c.start >= (since?.[c.stream] ?? 0) && c.end <= (exit.logBytes?.[c.stream] ?? Infinity),
  );
}

/**
 * Takes from `crashes` the crash text that announced the induced `exit`: what its process wrote
 * from the later of `from` (the log sizes when the fault began, the node's previous exit) up to
 * its exit, except memory errors.
 */
function takeAnnouncing(
  crashes: Map<string, CrashLine[]>,
  exit: NodeExit,
  from: readonly (Readonly<Record<string, number>> | undefined)[],
): CrashLine[] {
  const all = crashes.get(exit.node) ?? [];
  const startOf = (stream: string): number => Math.max(0, ...from.map((f) => f?.[stream] ?? 0));
  const announcing = all.filter(
    (c) => !c.memoryError && c.start >= startOf(c.stream) && c.end <= (exit.logBytes?.[c.stream] ?? Infinity),
  );
  crashes.set(
    exit.node,
    all.filter((c) => !announcing.includes(c)),
  );
  return announcing;
}

/**
 * The crash report the induced fault made `exit`'s process start, when it died by a memory fault
 * while writing it: its crash text from the later of the fault's start and the node's previous
 * exit up to the exit (both log sizes known), begun before the fault's grace ended
 * (`untilBytes`), none of it a memory error or a signal's own report (then the fault, not the
 * signal, started the report), and no crash text of the process before the fault. Taken from
 * `crashes` when it is; otherwise undefined and `crashes` untouched (the text and the exit stay
 * findings).
 */
function reportUnderway(
  crashes: Map<string, CrashLine[]>,
  exit: NodeExit,
  induced: InducedCause,
  since: Readonly<Record<string, number>> | undefined,
): CrashLine[] | undefined {
  const { fromBytes } = induced;
  const logBytes = exit.logBytes;
  if (fromBytes === undefined || logBytes === undefined) return undefined;
  const all = crashes.get(exit.node) ?? [];
  const startOf = (stream: string): number => Math.max(fromBytes[stream] ?? 0, since?.[stream] ?? 0);
  const its = all.filter((c) => c.start >= startOf(c.stream) && c.end <= (logBytes[c.stream] ?? 0));
  if (its.length === 0 || its.some((c) => c.memoryError || SIGNAL_REPORT.test(c.line))) return undefined;
  const { untilBytes } = induced;
  if (untilBytes !== undefined && !its.some((c) => c.start < (untilBytes[c.stream] ?? 0))) return undefined;
  // Crash text of the same process from before the fault: the report did not begin with it.
  const before = all.filter(
    (c) => c.start >= (since?.[c.stream] ?? 0) && c.start < (fromBytes[c.stream] ?? 0),
  );
  if (before.length > 0) return undefined;
  crashes.set(
    exit.node,
    all.filter((c) => !its.includes(c)),
  );
  return its;
}

/**
 * The last `count` complete lines of `file` that end at or before byte `end` (default: the end
 * of the file); none when it cannot be read.
 */
export function lastLinesOf(file: string, count: number, end?: number): string[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const stop = Math.min(end ?? Infinity, fstatSync(fd).size);
    const start = Math.max(0, stop - EXIT_CONTEXT_BYTES);
    const buffer = Buffer.alloc(stop - start);
    const read = readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer.subarray(0, read).toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    // A window that starts inside a line drops that partial line.
    if (start > 0) lines.shift();
    return lines.slice(-count);
  } finally {
    closeSync(fd);
  }
}
