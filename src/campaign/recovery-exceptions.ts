import {
  type DeathWhileWritesRefused,
  type DurabilityContract,
  type DurabilityVerdict,
  judgeDurability,
} from '../check/durability.js';
import { rethrowHarness } from '../core/errors.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';
import type { ClusterView, SystemAdapter } from '../systems/system.js';

/** A declared exception to the recovery contract that explains a `no-recovery`. */
export interface ExpectedNoRecovery {
  /** The system's statement of it (`RecoveryException.why`). */
  readonly why: string;
  /** What the nodes answered that shows it (`RecoveryException.holds`). */
  readonly shown: string;
  /** The fault of the schedule that led there, as `fsync-error n1 at 5.2 s`. */
  readonly after: string;
}

/**
 * The first exception `system` declares whose fault ran in the schedule (`faults`) and whose state
 * the nodes are in now; undefined when none (the `no-recovery` is then a finding). A question that
 * throws answers no.
 */
export async function expectedNoRecovery(
  system: Pick<SystemAdapter, 'recoveryExceptions'>,
  faults: readonly ScheduleEntry[],
  cluster: ClusterView,
  timeoutMs: number,
): Promise<ExpectedNoRecovery | undefined> {
  for (const exception of system.recoveryExceptions ?? []) {
    const fault = [...faults].reverse().find((f) => exception.after.includes(f.f));
    if (fault === undefined) continue;
    let shown: string | undefined;
    try {
      shown = await exception.holds(cluster, timeoutMs);
    } catch (error) {
      rethrowHarness(error);
      shown = undefined;
    }
    if (shown === undefined) continue;
    const after = `${fault.f}${fault.nodes !== undefined ? ` ${fault.nodes.join(',')}` : ''} at ${(fault.atMs / 1000).toFixed(1)} s`;
    return { why: exception.why, shown, after };
  }
  return undefined;
}

/**
 * Disks that lost more than the contract says the system survives (`judgeDurability`) may have
 * taken the state it needs to serve again (a Raft vote, a Sentinel's configuration epoch), as
 * they may take acknowledged writes: a `no-recovery` after them is a note, as a lost write is.
 * Undefined when there is no contract, no disk lost data, or the losses stayed within it.
 */
export function disksLostBeyondContract(
  contract: DurabilityContract | undefined,
  systemName: string,
  faults: readonly ScheduleEntry[],
  nodeCount: number,
  deaths: readonly DeathWhileWritesRefused[] = [],
): { words: string; evidence: DurabilityContract & DurabilityVerdict } | undefined {
  if (contract === undefined) return undefined;
  const verdict = judgeDurability(contract.level, faults, nodeCount, deaths);
  if (verdict === undefined || verdict.withinContract) return undefined;
  const who =
    contract.statedBy === 'system' ? `${systemName} declares it survives` : 'the run checks (--durability)';
  return {
    words: `after disk losses beyond what ${who} (${contract.level}: ${verdict.beyond ?? ''})`,
    evidence: { ...contract, ...verdict },
  };
}
