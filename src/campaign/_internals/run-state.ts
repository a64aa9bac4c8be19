import { Coverage } from '../../abstraction/coverage.js';
import type { NodeExit } from '../../cluster/cluster.js';
import type { RunStop } from '../stop-signal.js';
import { EventTypes } from '../../observe/event-types.js';
import type { BugHit, BugRecord } from '../bug.js';
import { FindingGroups } from '../finding-groups.js';
import type { Progress } from '../reporter.js';
import type { ScheduleVerdicts } from '../../core/verdict.js';

/**
 * What a campaign tracks as it runs, shared by its phases: where it is (schedule, step, phase)
 * for the progress line, and the tallies its summary reports.
 */
export class RunState {
  schedule = 0;
  step = 0;
  phase: Progress['phase'] = 'starting';
  startMs = Date.now();
  /** When the first schedule started and the last one ended (with its checks), once they did. */
  schedulesFromMs: number | undefined;
  schedulesToMs: number | undefined;
  /** When the last schedule's faults ended (the reset and its checks follow). */
  faultsEndedMs: number | undefined;
  /** How long the last schedule's reset, final reads and checks took (ms), once it ended. */
  lastPhases: { resetMs: number; finalReadsMs: number; checksMs: number } | undefined;
  faultCount = 0;
  /** One per root cause: a finding whose signature a bug has is a hit of that bug. */
  readonly bugs: BugRecord[] = [];
  /** The hits of each bug, by signature. */
  readonly findingGroups = new FindingGroups<BugHit>();
  /** Each checked schedule's verdicts, in order. */
  readonly verdicts: ScheduleVerdicts[] = [];
  /** Node exits the cluster saw since the last schedule's log check took them. */
  readonly exits: NodeExit[] = [];
  /** The signal that stopped the run and when the fuzzer saw it (`monoNs`), once one did. */
  stop: RunStop | undefined;
  readonly coverage = new Coverage();
  /** The event types observed so far, for the triggers a policy can arm. */
  readonly eventTypes = new EventTypes();
  decisions = 0;
  decisionsWithState = 0;
  triggersArmed = 0;
  triggersFired = 0;
  /** Node exits put down to a disk fault in effect (see `NodeDisks.exitCause`). */
  inducedExits = 0;
  peakRssBytes = 0;
}
