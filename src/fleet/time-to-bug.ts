import { smallestP } from '../campaign/compare.js';
import { a12, mannWhitneyU } from '../report/stats.js';
import { kaplanMeier, type SurvivalStep, survivalMedianMs } from '../report/survival.js';

/** One done campaign of a comparison: when it first found anything, and when it ended. */
export interface CampaignOutcome {
  readonly index: number;
  readonly seed: number;
  /** The first finding of any kind (with a bug switched on, that bug showing); null: none. */
  readonly firstFindMs: number | null;
  /** The campaign's own time at its end (its budget, when the record does not say). */
  readonly endMs: number;
}

/** How the time-to-bug figures against the baseline are computed, as the report says it. */
export const TIME_TO_BUG_TEST =
  'Â12: the chance a campaign of the policy finds it sooner than one of the baseline, ties counting half; p: two-sided Mann–Whitney U (exact permutation distribution up to 40 campaigns in all, ties included; above, the normal approximation with tie and continuity correction); a campaign that did not find it counts as +∞, later than every find (all such campaigns tie)';

export interface ArmTimeToBug {
  readonly runs: number;
  readonly found: number;
  /** First time at which half the campaigns are estimated to have found it; null: not reached. */
  readonly medianMs: number | null;
  /** The Kaplan–Meier curve as the share found, one step per find time. */
  readonly steps: readonly SurvivalStep[];
  /** The ends of the campaigns that did not find it (where the curve is censored). */
  readonly censoredAtMs: readonly number[];
  /** Against the baseline (absent for the baseline itself). */
  readonly a12Sooner?: number;
  readonly p?: number;
  readonly pMethod?: 'exact' | 'normal';
  /** The smallest p a rank test can give at these sizes (every campaign of one side before the other's). */
  readonly leastP?: number;
}

export interface TimeToBug {
  /** The bug switch (`ack-before-commit`), or the system when the comparison has none. */
  readonly bug: string;
  readonly baseline: string;
  /** {@link TIME_TO_BUG_TEST}. */
  readonly test: string;
  readonly arms: Readonly<Record<string, ArmTimeToBug>>;
}

/**
 * Sooner-is-better values for the rank test: a find's time negated, a miss below every find
 * (as if found at +∞: one past the latest time of either side, so misses tie with each other only).
 */
function soonerScores(outcomes: readonly CampaignOutcome[], beyondMs: number): number[] {
  return outcomes.map((o) => -(o.firstFindMs ?? beyondMs));
}

/** Per arm of one comparison, the survival curve of its campaigns and, against the baseline, Â12 and p. */
export function timeToBug(
  bug: string,
  outcomes: Readonly<Record<string, readonly CampaignOutcome[]>>,
  baseline: string,
): TimeToBug {
  const all = Object.values(outcomes).flat();
  const beyondMs = Math.max(0, ...all.map((o) => Math.max(o.endMs, o.firstFindMs ?? 0))) + 1;
  const base = outcomes[baseline] ?? [];
  const arms: Record<string, ArmTimeToBug> = {};
  for (const [arm, list] of Object.entries(outcomes)) {
    if (list.length === 0) continue;
    const steps = kaplanMeier(
      list.map((o) => ({ atMs: o.firstFindMs ?? o.endMs, found: o.firstFindMs !== null })),
    );
    let versus: Pick<ArmTimeToBug, 'a12Sooner' | 'p' | 'pMethod' | 'leastP'> = {};
    if (arm !== baseline && base.length > 0) {
      const xs = soonerScores(list, beyondMs);
      const ys = soonerScores(base, beyondMs);
      const test = mannWhitneyU(xs, ys);
      versus = {
        a12Sooner: a12(xs, ys),
        p: test.p,
        pMethod: test.method,
        leastP: smallestP(xs.length, ys.length),
      };
    }
    arms[arm] = {
      runs: list.length,
      found: list.filter((o) => o.firstFindMs !== null).length,
      medianMs: survivalMedianMs(steps),
      steps,
      censoredAtMs: list.filter((o) => o.firstFindMs === null).map((o) => o.endMs),
      ...versus,
    };
  }
  return { bug, baseline, test: TIME_TO_BUG_TEST, arms };
}
