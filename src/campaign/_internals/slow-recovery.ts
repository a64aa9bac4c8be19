import type { Op } from '../../core/op.js';
import { checkRecoveryContract, type PerfSample, type RecoveryVerdict } from '../recovery-contract.js';
import type { Recovery } from './heal-and-recover.js';
import type { LiveRun } from './live-run.js';

/**
 * The recovery contract (`--recovery-contract`), once the system serves again: the workload runs
 * in windows after the reset, their ops joining the schedule's `ops`, until it performs as in the
 * warm-up (`baseline`) or the contract's time is up. The verdict when it was not met; undefined
 * when it was, or was not checked.
 */
export async function slowRecovery(
  live: LiveRun,
  schedule: number,
  recovery: Recovery,
  baseline: PerfSample | undefined,
  ops: Op[],
): Promise<RecoveryVerdict | undefined> {
  const { config, signal, parts, history, clock } = live;
  if (!(recovery.recovered && baseline && config.recoveryContract && !signal.aborted)) return undefined;
  const contract = config.recoveryContract;
  const running = parts.workload;
  let window = 0;
  const verdict = await checkRecoveryContract(
    async () => {
      running.start(`s${schedule}-after${window++}`);
      await clock.sleep(contract.windowMs, signal);
      await running.stop();
      const segment = history.takeSegment();
      ops.push(...segment);
      return segment;
    },
    baseline,
    contract,
    signal,
    clock,
  );
  return !verdict.met && !signal.aborted ? verdict : undefined;
}
