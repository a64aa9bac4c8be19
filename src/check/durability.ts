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

/** The durability a campaign checks, and who stated it: the system's adapter, or the user (`--durability`). */
export interface DurabilityContract {
  readonly level: Durability;
  readonly statedBy: 'system' | 'user';
}

/**
 * The faults that drop written data from a disk: a kill that also loses what was not fsynced, and
 * one that keeps only a torn prefix of the last unsynced write (it loses no less, so the contract
 * judges it alike). A plain kill loses nothing a process wrote, so a write lost after kills alone
 * is a replication or commit matter, judged as linearizability, not durability.
 */
export const DISK_LOSS_FAULTS: readonly string[] = ['lose-unfsynced', 'torn-write'];

export interface DurabilityVerdict {
  /** Whether the schedule's faults stayed within what the system declares its writes survive. */
  readonly withinContract: boolean;
  /** The faults of the schedule that dropped data from disks, described (`lose-unfsynced n1,n2 at 4.0 s`). */
  readonly dataLossFaults: readonly string[];
  /** Why the faults went beyond the contract, when they did. */
  readonly beyond?: string;
}

function describeEntry(entry: EnactedFault): string {
  return `${entry.f} ${(entry.nodes ?? []).join(',')} at ${(entry.atMs / 1000).toFixed(1)} s`;
}

/**
 * Whether the disk losses of a schedule stay within `durability` for a cluster of `nodeCount`: a
 * lost acknowledged write after losses within it breaks the system's contract; after losses beyond
 * it, the loss is what the system declared can happen. Undefined when the schedule dropped nothing
 * from a disk (durability is then not in question).
 */
export function judgeDurability(
  durability: Durability,
  faults: readonly EnactedFault[],
  nodeCount: number,
): DurabilityVerdict | undefined {
  const diskLoss = faults.filter((f) => DISK_LOSS_FAULTS.includes(f.f));
  if (diskLoss.length === 0) return undefined;
  const described = diskLoss.map(describeEntry);
  if (durability === 'disk-loss') return { withinContract: true, dataLossFaults: described };
  if (durability === 'process-crash') {
    return {
      withinContract: false,
      dataLossFaults: described,
      beyond: `${describeEntry(diskLoss[0])} dropped unfsynced writes, and the contract is only that writes survive a process crash`,
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
        beyond: `${nodes.size} of ${nodeCount} nodes (${[...nodes].sort().join(', ')}) dropped unfsynced writes in this schedule, and the contract is that writes survive that on a minority only`,
      };
}
