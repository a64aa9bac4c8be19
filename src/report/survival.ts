/**
 * Time to an event over campaigns, Kaplan–Meier style: the share of campaigns that have found a
 * bug by each time, where a campaign that ended without finding it is censored at its end (it
 * counts as "not yet" up to then, and is no longer at risk after). With every miss censored at
 * the same budget this is the plain share of campaigns that found it by each time.
 */

/** One campaign: when it found the bug, or when it ended without (censored). */
export interface SurvivalObservation {
  readonly atMs: number;
  readonly found: boolean;
}

/** The curve just after a time at which some campaign found the bug. */
export interface SurvivalStep {
  readonly atMs: number;
  /** The estimated share of campaigns that have found it by `atMs`: 1 − S(atMs). */
  readonly found: number;
  /** Campaigns still at risk just before `atMs` (neither found nor ended earlier). */
  readonly atRisk: number;
  /** Campaigns that found it at `atMs`. */
  readonly finds: number;
}

/** Below this a share is taken as equal to the one it is compared with (float sums). */
const SHARE_EPSILON = 1e-12;

/**
 * The Kaplan–Meier estimate as the share found: S(t) = Π over find times tᵢ ≤ t of (1 − dᵢ/nᵢ),
 * dᵢ the finds at tᵢ and nᵢ the campaigns at risk then. A campaign censored at the very time of a
 * find is still at risk at it (the usual convention: finds come first). One step per find time.
 */
export function kaplanMeier(observations: readonly SurvivalObservation[]): SurvivalStep[] {
  for (const o of observations) {
    if (!(o.atMs >= 0) || Number.isNaN(o.atMs)) {
      throw new RangeError(`kaplanMeier: times must be non-negative numbers, got ${o.atMs}`);
    }
  }
  const times = [...new Set(observations.filter((o) => o.found).map((o) => o.atMs))].sort((a, b) => a - b);
  const steps: SurvivalStep[] = [];
  let survival = 1;
  for (const t of times) {
    const atRisk = observations.filter((o) => o.atMs >= t).length;
    const finds = observations.filter((o) => o.found && o.atMs === t).length;
    survival *= 1 - finds / atRisk;
    steps.push({ atMs: t, found: 1 - survival, atRisk, finds });
  }
  return steps;
}

/** The share found by `atMs` on a curve (0 before its first step). */
export function foundBy(steps: readonly SurvivalStep[], atMs: number): number {
  let share = 0;
  for (const s of steps) if (s.atMs <= atMs) share = s.found;
  return share;
}

/**
 * The median time to the bug: the first time at which at least half the campaigns are estimated to
 * have found it (S(t) ≤ 0.5); where the curve is exactly one half from a find until the next, the
 * midpoint of the two (as R's `survfit` has it, so with nothing censored early it is the sample
 * median: 25 for finds at 10, 20, 30 and 40). Null ("not reached") when the curve stays below one
 * half — fewer than half found it, or too many ended before they could.
 */
export function survivalMedianMs(steps: readonly SurvivalStep[]): number | null {
  const i = steps.findIndex((s) => s.found >= 0.5 - SHARE_EPSILON);
  if (i < 0) return null;
  const exactlyHalf = steps[i].found <= 0.5 + SHARE_EPSILON;
  return exactlyHalf && i + 1 < steps.length ? (steps[i].atMs + steps[i + 1].atMs) / 2 : steps[i].atMs;
}
