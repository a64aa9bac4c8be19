import type { ExecResult } from '../runtime.js';

/**
 * A reading of a host's boot clock (`/proc/uptime`, in centiseconds; no clock fault moves it)
 * against this process's monotonic clock (`performance.now()`), good to within `errorMs` (half the
 * round trip it took).
 */
export interface HostClockAnchor {
  readonly hostCs: number;
  readonly localMs: number;
  readonly errorMs: number;
}

const CS_PER_MS = 0.1;
/** Kept between a guard's deadline and the caller's timeout, past the anchor's error. */
export const LATE_MARGIN_MS = 100;
/** The exit status of a command refused for arriving after its timeout (`timeout(1)`'s). */
export const LATE_EXIT = 124;

/** Shell text printing the host's boot clock in centiseconds and the shell's pid. */
export const ANCHOR_COMMAND =
  'read __mallory_up __mallory_idle </proc/uptime && echo "${__mallory_up%.*}${__mallory_up#*.} $$"';

/**
 * The anchor and the shell's pid `ANCHOR_COMMAND` answered, asked at `sentMs` and answered at
 * `answeredMs`; undefined when the host has no `/proc/uptime` (commands then go unguarded).
 */
export function readAnchor(
  answer: ExecResult,
  sentMs: number,
  answeredMs: number,
): { readonly anchor: HostClockAnchor; readonly pid: number } | undefined {
  const m = /^(\d+) (\d+)\s*$/.exec(answer.stdout);
  if (answer.code !== 0 || m === null) return undefined;
  return {
    anchor: { hostCs: Number(m[1]), localMs: (sentMs + answeredMs) / 2, errorMs: (answeredMs - sentMs) / 2 },
    pid: Number(m[2]),
  };
}

/**
 * `command` behind a check that the host starts it before its deadline — `timeoutMs` from `nowMs`,
 * less the anchor's error and `LATE_MARGIN_MS` (at least half the timeout) — on the host's own
 * boot clock: a command still queued when the caller gave up on it (a cut or slow link delivers it
 * later) exits `LATE_EXIT` there and does nothing.
 */
export function guardLate(
  command: string,
  anchor: HostClockAnchor,
  nowMs: number,
  timeoutMs: number,
): string {
  const allowedMs = Math.max(timeoutMs - anchor.errorMs - LATE_MARGIN_MS, timeoutMs / 2);
  const deadlineCs = Math.floor(anchor.hostCs + (nowMs - anchor.localMs + allowedMs) * CS_PER_MS);
  return [
    'read __mallory_up __mallory_idle </proc/uptime',
    `[ "\${__mallory_up%.*}\${__mallory_up#*.}" -lt ${deadlineCs} ] || { echo 'mallory: the command arrived after its ${timeoutMs} ms timeout: not run' >&2; exit ${LATE_EXIT}; }`,
    command,
  ].join('\n');
}

/**
 * Shell text that kills the process group of the shell `pid` (a session's shell leads its own
 * group, with the command it runs), so a command the caller gave up on cannot finish later.
 */
export function killGroupOf(pid: number): string {
  return `pg=$(cut -d' ' -f5 /proc/${pid}/stat 2>/dev/null); [ -n "$pg" ] && [ "$pg" -gt 1 ] && kill -KILL -- "-$pg"`;
}
