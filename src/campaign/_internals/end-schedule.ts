import { scheduleVerdicts } from '../../core/verdict.js';
import type { ScheduleFindings } from './collect-findings.js';
import type { Recovery } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';
import { saveLearning } from './save-learning.js';

/** Stores the schedule as ended (its ops, findings, verdicts and recovery time) and what it taught. */
export function endSchedule(
  live: LiveRun,
  schedule: number,
  opCount: number,
  found: ScheduleFindings,
  recovery: Recovery,
): void {
  const { state, store, clock } = live;
  const verdicts = scheduleVerdicts(schedule, found.verdicts);
  state.verdicts.push(verdicts);
  store.scheduleEnded(
    schedule,
    clock.nowMs() - state.startMs,
    opCount,
    {
      findings: found.findings.length,
      checks: found.checks,
      valid: verdicts.valid,
      verdicts: found.verdicts,
    },
    recovery.recoveryMs,
  );
  // Every schedule, so a run killed later still seeds the next one (`--seed-from`).
  saveLearning(live);
  state.phase = 'fuzzing';
}
