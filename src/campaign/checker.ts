import type { DurabilityContract } from '../check/durability.js';
import type { LeaderChange } from '../check/failover-loss.js';
import type { Event } from '../core/event.js';
import type { Op } from '../core/op.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';
import type { SystemAdapter } from '../systems/system.js';
import type { BugKind } from './bug.js';
import type { DeathWhileWritesRefused } from '../check/durability.js';

export interface ScheduleCheckInput {
  readonly schedule: number;
  readonly ops: readonly Op[];
  readonly faults: readonly ScheduleEntry[];
  /** Node processes that ended by themselves while their disk refused writes (judged as disk losses). */
  readonly deathsWhileWritesRefused?: readonly DeathWhileWritesRefused[];
  /** The probe events of the schedule that the invariant checks need (`InvariantEvents`). */
  readonly events: readonly Event[];
  readonly runDir: string;
  /** The system under test: what it promises (e.g. its transactions' consistency model). */
  readonly system: SystemAdapter;
  /** Nodes in the cluster. */
  readonly nodeCount: number;
  /**
   * The durability the run checks: the user's (`--durability`), else the system's declaration.
   * Absent: the system's `durability`, if it declares one.
   */
  readonly durability?: DurabilityContract;
  /**
   * The leader changes the run saw in the schedule (the system's `failoverLoss` events), at history
   * time; absent when it declares none.
   */
  readonly leaderChanges?: readonly LeaderChange[];
}

/** Something a checker found wrong in one schedule. */
export interface Finding {
  readonly kind: BugKind;
  readonly name: string;
  readonly message: string;
  readonly evidence: unknown;
  /** A self-contained HTML page that shows it, written next to the bug record. */
  readonly html?: string;
  /**
   * `note`: not a bug — something the system declared can happen (a write lost to faults beyond its
   * declared durability); said in the history and on the terminal, no bug record. Default `bug`.
   */
  readonly severity?: 'bug' | 'note';
  /**
   * The checker could not tell (a time limit, a workload's own check answering `'unknown'`): its
   * verdict is unknown, its message says why. Always a note, never a bug.
   */
  readonly unknown?: true;
  /**
   * What makes it one bug with others (`findingSignature`), when the finding says it itself;
   * otherwise its kind, name and the shape of its evidence.
   */
  readonly signature?: string;
}

/** A check run on each schedule's history and observations. */
export interface ScheduleChecker {
  readonly name: string;
  check(input: ScheduleCheckInput): Promise<readonly Finding[]>;
}
