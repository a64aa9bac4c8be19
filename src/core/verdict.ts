/**
 * Verdicts, as Jepsen's results give them (`:valid? true | false | :unknown` for every checker):
 * after each schedule every check says whether its history was valid, with the ops it was given and
 * the time it took, and the run's verdict merges them all.
 */

/** A check's answer: valid, invalid, or it could not tell (`'unknown'`, with the reason). */
export type Valid = boolean | 'unknown';

/** What one check said about one schedule. */
export interface CheckerVerdict {
  /** `crash`, `recovery`, or a checker's name (`linearizable`, `list-append`, `set`, …). */
  readonly checker: string;
  readonly valid: Valid;
  /** Why it could not tell (time limit, the run stopped first, …); only with `valid: 'unknown'`. */
  readonly reason?: string;
  /** What it found, as `kind/name` (none when valid). */
  readonly findings: readonly string[];
  /** The client ops it checked; null for checks of the nodes themselves (crash, recovery). */
  readonly ops: number | null;
  /** How long it took (ms); null where nothing was computed (crash, recovery). */
  readonly ms: number | null;
}

/** One schedule's verdicts. */
export interface ScheduleVerdicts {
  readonly schedule: number;
  readonly valid: Valid;
  readonly checkers: readonly CheckerVerdict[];
}

/** How often a check said each answer over the run's schedules. */
export interface VerdictTally {
  readonly checker: string;
  readonly schedules: number;
  readonly valid: number;
  readonly invalid: number;
  readonly unknown: number;
}

/** The run's verdict: all its schedules' merged, and each check's tally. */
export interface RunVerdict {
  readonly valid: Valid;
  readonly checkers: readonly VerdictTally[];
}

/**
 * Jepsen's merge of validities: any invalid makes the whole invalid; else any unknown makes it
 * unknown; else valid (nothing checked is valid, as Jepsen's `merge-valid` of none).
 */
export function mergeValid(values: Iterable<Valid>): Valid {
  let merged: Valid = true;
  for (const v of values) {
    if (v === false) return false;
    if (v === 'unknown') merged = 'unknown';
  }
  return merged;
}

/** A schedule's verdicts with their merge. */
export function scheduleVerdicts(schedule: number, checkers: readonly CheckerVerdict[]): ScheduleVerdicts {
  return { schedule, valid: mergeValid(checkers.map((c) => c.valid)), checkers };
}

/**
 * The run's verdict from its schedules' (unknown when none was checked), each check tallied in the
 * order it first ran.
 */
export function runVerdict(schedules: readonly ScheduleVerdicts[]): RunVerdict {
  const tallies = new Map<string, { schedules: number; valid: number; invalid: number; unknown: number }>();
  for (const s of schedules) {
    for (const c of s.checkers) {
      const t = tallies.get(c.checker) ?? { schedules: 0, valid: 0, invalid: 0, unknown: 0 };
      t.schedules++;
      if (c.valid === true) t.valid++;
      else if (c.valid === false) t.invalid++;
      else t.unknown++;
      tallies.set(c.checker, t);
    }
  }
  return {
    // A run that checked no schedule (stopped during its first) cannot say it was valid.
    valid: schedules.length === 0 ? 'unknown' : mergeValid(schedules.map((s) => s.valid)),
    checkers: [...tallies].map(([checker, t]) => ({ checker, ...t })),
  };
}

/** `valid`, `invalid` or `unknown`, as a word. */
export function validWord(valid: Valid): 'valid' | 'invalid' | 'unknown' {
  return valid === true ? 'valid' : valid === false ? 'invalid' : 'unknown';
}

/**
 * The run's verdict in one line, e.g. `invalid — crash 35/37 valid (2 invalid), recovery 37/37
 * valid, linearizable 36/37 valid (1 unknown)`; `no schedule was checked` when none was.
 */
export function describeRunVerdict(verdict: RunVerdict): string {
  if (verdict.checkers.length === 0) return 'unknown — no schedule was checked';
  const parts = verdict.checkers.map((t) => {
    const rest = [
      ...(t.invalid > 0 ? [`${t.invalid} invalid`] : []),
      ...(t.unknown > 0 ? [`${t.unknown} unknown`] : []),
    ];
    return `${t.checker} ${t.valid}/${t.schedules} valid${rest.length > 0 ? ` (${rest.join(', ')})` : ''}`;
  });
  return `${validWord(verdict.valid)} — ${parts.join(', ')}`;
}

/**
 * Verdicts of a schedule stored before they were (its check lists only): a check that found
 * something was invalid, one that found nothing valid; ops and time were not kept.
 */
export function verdictsFromChecks(checks: Readonly<Record<string, readonly string[]>>): CheckerVerdict[] {
  return Object.entries(checks).map(([checker, findings]) => ({
    checker,
    valid: findings.length === 0,
    findings: [...findings],
    ops: null,
    ms: null,
  }));
}
