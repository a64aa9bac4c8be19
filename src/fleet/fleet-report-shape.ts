import type { CompareResult } from '../campaign/compare.js';
import type { StatesOverTime } from './states-over-time.js';
import type { FleetStatus } from './status.js';
import type { TimeToBug } from './time-to-bug.js';

/** One bug as the fleet saw it: every hit of one signature, over workers, seeds and policies. */
export interface FleetFinding {
  readonly signature: string;
  readonly kind: string;
  readonly name: string;
  /** The first hit's message. */
  readonly message: string;
  /** The schedules that found it, over every campaign (a campaign's own repeats counted). */
  readonly hits: number;
  /** Distinct campaigns (indices), workers (host:pid) and seeds that hit it. */
  readonly campaigns: readonly number[];
  readonly workers: readonly string[];
  readonly seeds: readonly number[];
  readonly arms: readonly string[];
  readonly groups: readonly string[];
  /** The earliest hit (in campaign time): where to look first, and how to replay it. */
  readonly first: {
    readonly index: number;
    readonly foundAtMs: number;
    readonly dir: string;
    /** Found in a simulated world: one replay tells, it is exact. */
    readonly simulated: boolean;
    readonly replay: string;
    readonly shrink: string;
  };
}

export interface FleetGroup {
  readonly group: string;
  /** The comparison of the group's done campaigns, as `compare` gives it (`compare.json` in its dir). */
  readonly comparison: CompareResult | undefined;
  /** Said when the comparison's runs are too few for any difference to be significant. */
  readonly warning?: string;
  /**
   * Per arm, the share of campaigns that found the bug over time (Kaplan–Meier), the median time
   * to it, found/total, and Â12 and p that it is found sooner than by the baseline.
   */
  readonly timeToBug?: TimeToBug;
  /** Per arm, distinct states over time: median and quartiles over the campaigns. */
  readonly states?: StatesOverTime;
  /** Distinct states of all the group's done runs together, per abstraction, and per arm. */
  readonly unionStates: Readonly<Record<string, number>>;
  readonly unionStatesByArm: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export interface FleetReport {
  readonly format: 'mallory-fleet-report';
  readonly plan: string;
  readonly id: string;
  readonly system: string;
  readonly workload: string;
  readonly timeMs: number;
  readonly status: FleetStatus;
  readonly groups: readonly FleetGroup[];
  readonly findings: readonly FleetFinding[];
  readonly dir: string;
}
