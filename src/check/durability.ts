/** A fault as enacted (a schedule entry's fields this needs). */
export interface EnactedFault {
  readonly atMs: number;
  readonly f: string;
  readonly nodes?: readonly string[];
}

/**
 * What a system declares an acknowledged write survives:
 * - `process-crash`: its processes being killed (what it wrote reaches the disk eventually);
 * - `minority-disk-loss`: also a minority of nodes losing what they had not fsynced;
 * - `disk-loss`: also every node losing what it had not fsynced (an acknowledgement waits for
 *   fsyncs on a quorum).
 * A system that declares nothing promises that no acknowledged write is ever lost.
 */
export type Durability = 'process-crash' | 'minority-disk-loss' | 'disk-loss';
export const DURABILITIES: readonly Durability[] = ['process-crash', 'minority-disk-loss', 'disk-loss'];

/** The faults that can lose written data: a kill, and a kill that also drops unfsynced writes. */
const DATA_LOSS_FAULTS = new Set(['kill', 'lose-unfsynced']);

export interface DurabilityVerdict {
  /** Whether the schedule's faults stayed within what the system declares its writes survive. */
  readonly withinContract: boolean;
  /** The faults of the schedule that can lose data, described (`lose-unfsynced n1,n2 at 4.0 s`). */
  readonly dataLossFaults: readonly string[];
  /** Why the faults went beyond the contract, when they did. */
  readonly beyond?: string;
}

function describeEntry(entry: EnactedFault): string {
  return `${entry.f} ${(entry.nodes ?? []).join(',')} at ${(entry.atMs / 1000).toFixed(1)} s`;
}

/**
 * Whether the faults a schedule enacted stay within `durability` for a cluster of `nodeCount`: a
 * lost acknowledged write after faults within it breaks the system's contract; after faults beyond
 * it, the loss is what the system declared can happen.
 */
export function judgeDurability(
  durability: Durability,
  faults: readonly EnactedFault[],
  nodeCount: number,
): DurabilityVerdict {
  const dataLoss = faults.filter((f) => DATA_LOSS_FAULTS.has(f.f));
  const described = dataLoss.map(describeEntry);
  const diskLoss = dataLoss.filter((f) => f.f === 'lose-unfsynced');
  if (durability === 'disk-loss' || diskLoss.length === 0) {
    return { withinContract: true, dataLossFaults: described };
  }
  if (durability === 'process-crash') {
    return {
      withinContract: false,
      dataLossFaults: described,
      beyond: `${describeEntry(diskLoss[0])} dropped unfsynced writes, and the system declares only that its writes survive a process crash`,
    };
  }
  // minority-disk-loss: nodes that lost unfsynced writes in this schedule, counted together (what
  // one lost may not have been copied again before another lost its own).
  const nodes = new Set(diskLoss.flatMap((f) => f.nodes ?? []));
  const majority = Math.floor(nodeCount / 2) + 1;
  return nodes.size < majority
    ? { withinContract: true, dataLossFaults: described }
    : {
        withinContract: false,
        dataLossFaults: described,
        beyond: `${nodes.size} of ${nodeCount} nodes (${[...nodes].sort().join(', ')}) dropped unfsynced writes in this schedule, and the system declares its writes survive that on a minority only`,
      };
}
