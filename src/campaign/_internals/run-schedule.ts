import type { Rng } from '../../core/random.js';
import { beginSchedule } from './begin-schedule.js';
import { collectFindings } from './collect-findings.js';
import { driveSchedule } from './drive-schedule.js';
import { endSchedule } from './end-schedule.js';
import { finalReads } from './final-reads.js';
import { hardResetIfStuck } from './hard-reset-if-stuck.js';
import { healAndRecover } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';
import { recordFindings } from './record-findings.js';
import { slowRecovery } from './slow-recovery.js';
import { takeScheduleOps } from './take-schedule-ops.js';
import type { WarmUp } from './warm-up.js';

/**
 * One schedule, phase by phase: its faults enacted with the workload running, every fault healed
 * and the system's recovery awaited, the final reads and the recovery contract, the checks and
 * the bugs they found, a fresh cluster if it stayed stuck, and the schedule stored as ended.
 */
export async function runSchedule(
  live: LiveRun,
  warm: WarmUp,
  budgetEnd: number,
  policyRng: Rng,
): Promise<void> {
  const scheduled = await beginSchedule(live);
  const { state, clock } = live;
  state.lastPhases = undefined;
  await driveSchedule(live, scheduled, budgetEnd, policyRng);
  const faultsEnded = (state.faultsEndedMs = clock.nowMs());
  const ops = await takeScheduleOps(live, warm.carried);
  const recovery = await healAndRecover(live, ops);
  const resetEnded = clock.nowMs();
  await finalReads(live, recovery, ops);
  const readsEnded = clock.nowMs();
  const slow = await slowRecovery(live, scheduled.schedule, recovery, warm.baseline, ops);
  const found = await collectFindings(live, scheduled, ops, recovery, slow);
  recordFindings(live, scheduled, found.findings);
  const checksEnded = clock.nowMs();
  await hardResetIfStuck(live, recovery);
  endSchedule(live, scheduled.schedule, ops.length, found, recovery);
  // A fresh cluster for one that stayed stuck is part of the reset.
  state.lastPhases = {
    resetMs: resetEnded - faultsEnded + (clock.nowMs() - checksEnded),
    finalReadsMs: readsEnded - resetEnded,
    checksMs: checksEnded - readsEnded,
  };
}
