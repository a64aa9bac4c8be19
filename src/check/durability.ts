import { DISK_EFFECTS } from '../core/fault.js';

/** A fault as enacted (a schedule entry's fields this needs). */
export interface EnactedFault {
  readonly atMs: number;
  readonly f: string;
  readonly nodes?: readonly string[];
}

/**
 * A node's process that ended by itself while its disk refused its writes (an induced exit under
 * `disk-full`): it dropped what it kept in memory for them, as a kill then does. `atMs`: when the
 * run saw it (ms since the schedule began).
 */
export interface DeathWhileWritesRefused {
  readonly atMs: number;
  /** When it died, as op times (ns since the run began). */
  readonly timeNs: number;
  readonly node: string;
  /** The write-refusing fault in effect. */
  readonly because: string;
}

/** Whether an induced exit under this disk fault drops data (the disk refused writes). */
export function refusesWrites(diskFault: string | undefined): boolean {
  return diskFault !== undefined && WRITE_REFUSING_FAULTS.includes(diskFault);
}

/**
 * What a system declares an acknowledged write survives:
 * - `process-crash`: its processes being killed (what it wrote reaches the disk eventually; a kill
 *   while the disk refused its writes, `disk-full`, is judged as a disk loss);
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
 * The faults that drop written data from a disk (the disk family declares them, `DISK_EFFECTS`):
 * a kill that also loses what was not fsynced, and one that keeps only a torn prefix of the last
 * unsynced write (it loses no less, so the contract judges it alike). A plain kill loses nothing a
 * process wrote, so a write lost after kills alone is a replication or commit matter, judged as
 * linearizability, not durability.
 */
export const DISK_LOSS_FAULTS: readonly string[] = DISK_EFFECTS.dropsWritten;

/**
 * Faults under which a disk refuses a node's writes (`disk-full`: write(2) answers ENOSPC). A
 * system that acknowledges a write it could not hand to the disk (Redis under `appendfsync
 * everysec` keeps a failed AOF write in its buffer and retries it) holds it in memory only: a
 * kill while such a fault is in effect drops it as surely as `lose-unfsynced` would.
 */
const WRITE_REFUSING_FAULTS: readonly string[] = DISK_EFFECTS.refusesWrites;
const DISK_HEALS: readonly string[] = DISK_EFFECTS.healsDisk;

/**
 * The kills of a schedule that fell on nodes whose disk refused writes then (a write-refusing
 * fault begun on the node, not yet healed), as data-loss entries naming those nodes.
 */
export function killsWhileWritesRefused(
  faults: readonly EnactedFault[],
): (EnactedFault & { because: string })[] {
  const refusing = new Map<string, string>();
  const out: (EnactedFault & { because: string })[] = [];
  for (const fault of [...faults].sort((a, b) => a.atMs - b.atMs)) {
    const nodes = fault.nodes ?? [];
    if (WRITE_REFUSING_FAULTS.includes(fault.f)) for (const n of nodes) refusing.set(n, fault.f);
    else if (DISK_HEALS.includes(fault.f)) {
      if (fault.f === 'heal-all' || nodes.length === 0) refusing.clear();
      else for (const n of nodes) refusing.delete(n);
    } else if (fault.f === 'kill') {
      const hit = nodes.filter((n) => refusing.has(n));
      if (hit.length > 0) {
        const causes = [...new Set(hit.map((n) => refusing.get(n)))].join(', ');
        out.push({ atMs: fault.atMs, f: 'kill', nodes: hit, because: causes });
      }
    }
  }
  return out;
}

/** The contract a run checks: the user's (`--durability`), else the system's declaration, else none. */
export function durabilityContract(
  stated: DurabilityContract | undefined,
  declared: Durability | undefined,
): DurabilityContract | undefined {
  if (stated !== undefined) return stated;
  return declared !== undefined ? { level: declared, statedBy: 'system' } : undefined;
}

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
  deaths: readonly DeathWhileWritesRefused[] = [],
): DurabilityVerdict | undefined {
  const killed = [
    ...killsWhileWritesRefused(faults),
    ...deaths.map((d) => ({ atMs: d.atMs, f: 'exit', nodes: [d.node], because: d.because })),
  ];
  const diskLoss = [...faults.filter((f) => DISK_LOSS_FAULTS.includes(f.f)), ...killed].sort(
    (a, b) => a.atMs - b.atMs,
  );
  if (diskLoss.length === 0) return undefined;
  const described = diskLoss.map((f) =>
    'because' in f ? `${describeEntry(f)} while ${String(f.because)} refused its writes` : describeEntry(f),
  );
  if (durability === 'disk-loss') return { withinContract: true, dataLossFaults: described };
  if (durability === 'process-crash') {
    return {
      withinContract: false,
      dataLossFaults: described,
      beyond: `${described[0]} dropped ${'because' in diskLoss[0] ? 'writes the disk had not taken' : 'unfsynced writes'}, and the contract is only that writes survive a process crash`,
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
