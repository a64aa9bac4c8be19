/** Fault names as Jepsen names its nemesis ops. */
export const FAULT_KINDS = [
  'start-partition',
  'stop-partition',
  'kill',
  'start',
  'pause',
  'resume',
  'start-packet',
  'stop-packet',
  'member-remove',
  'member-add',
  'lose-unfsynced-writes',
  'bump-clock',
  'drift-clock',
  'strobe-clock',
  'reset-clock',
  'lose-unfsynced',
  'torn-write',
  'fsync-error',
  'slow-disk',
  'disk-full',
  'heal-disk',
  // Undoes every fault of every family at once: what a quiet period of `--pace` begins with (a bug
  // record keeps it as a line, so a replay heals where the run did); no policy chooses it.
  'heal-all',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export type Target = 'one' | 'minority' | 'majority' | 'all' | 'leader';
export const TARGETS: readonly Target[] = ['one', 'minority', 'majority', 'all', 'leader'];

export type PartitionShape = 'halves' | 'isolate' | 'majorities-ring' | 'bridge';
export const PARTITION_SHAPES: readonly PartitionShape[] = ['halves', 'isolate', 'majorities-ring', 'bridge'];

export interface PacketParams {
  readonly target: Target;
  readonly delayMs?: number;
  readonly lossPct?: number;
  readonly dupPct?: number;
}

/**
 * A clock fault on the target's wall clock: `bump-clock` adds `deltaMs` to its offset;
 * `drift-clock` makes it run at `rate` times real time; `strobe-clock` flips it between its offset
 * and the offset plus `deltaMs` every `periodMs`. `reset-clock` takes a plain target.
 */
export interface ClockParams {
  readonly target: Target;
  readonly deltaMs?: number;
  readonly rate?: number;
  readonly periodMs?: number;
}

/** `slow-disk`: each read and write of the target's data dir waits `delayMs`. */
export interface SlowDiskParams {
  readonly target: Target;
  readonly delayMs: number;
}

/**
 * How finely `torn-write` may cut a write: `sector`, in whole sectors of `SECTOR_BYTES` (the
 * default: sector-atomic writes are the contract most write-ahead logs assume, etcd's included),
 * or `byte`, anywhere, splitting a sector (for systems that declare they tolerate it).
 */
export type TornGranularity = 'sector' | 'byte';
export const TORN_GRANULARITIES: readonly TornGranularity[] = ['sector', 'byte'];

/**
 * The sector a `sector` tear keeps whole: 512 bytes, the smallest unit a drive writes atomically
 * (its logical block, at least 512 bytes), and the unit etcd's WAL (`minSectorSize`) and
 * PostgreSQL (`PG_CONTROL_MAX_SAFE_SIZE`) count on.
 */
export const SECTOR_BYTES = 512;

/** A granularity as the fault line and the report say it. */
export function describeTornGranularity(granularity: TornGranularity): string {
  return granularity === 'sector' ? `whole ${SECTOR_BYTES}-byte sectors` : 'torn inside a sector';
}

/**
 * `torn-write` with its cut: `seed` picks how much of each file's last unsynced write stays (the
 * nemesis draws it from the run's seed when the value is a plain target, and records it so), at
 * `granularity` (the run's when absent).
 */
export interface TornWriteParams {
  readonly target: Target | readonly string[];
  readonly seed: number;
  readonly granularity?: TornGranularity;
}

/** What a fault acts on: a target, explicit nodes, a partition shape, or packet, clock or disk parameters. */
export type FaultValue =
  | Target
  | readonly string[]
  | PartitionShape
  | PacketParams
  | ClockParams
  | SlowDiskParams
  | TornWriteParams
  | null;

/** What the policy chooses and the nemesis enacts. */
export interface Fault {
  readonly f: FaultKind;
  readonly value: FaultValue;
}

/** The fault families a user enables with `--faults`. */
export const FAULT_FAMILIES = ['partition', 'kill', 'pause', 'packet', 'member', 'clock', 'disk'] as const;
export type FaultFamily = (typeof FAULT_FAMILIES)[number];

/**
 * The families a run enables when `--faults` is not given: clock faults need libfaketime and a
 * system that honours it, disk faults FUSE and a system whose data dir can go under it.
 */
export const DEFAULT_FAULT_FAMILIES: readonly FaultFamily[] = [
  'partition',
  'kill',
  'pause',
  'packet',
  'member',
];

/** Each family's fault kinds; the last one undoes the others (a window lasts from one of them to it). */
export const FAMILY_KINDS: Readonly<Record<FaultFamily, readonly FaultKind[]>> = {
  partition: ['start-partition', 'stop-partition'],
  kill: ['kill', 'start'],
  pause: ['pause', 'resume'],
  packet: ['start-packet', 'stop-packet'],
  member: ['member-remove', 'member-add'],
  clock: ['bump-clock', 'drift-clock', 'strobe-clock', 'reset-clock'],
  disk: ['lose-unfsynced', 'torn-write', 'fsync-error', 'slow-disk', 'disk-full', 'heal-disk'],
};

/**
 * What the disk family's kinds do to written data, for the checks that judge a loss against a
 * system's durability: `dropsWritten` drop what a node wrote and had not fsynced (a torn write
 * keeps a prefix of the last write, and loses no less); `refusesWrites` make write(2) fail while
 * in effect (a kill then drops what the system kept in memory for it); `healsDisk` ends them
 * (`heal-all` too). Not `fsync-error`: its writes reach the file, only fsync fails.
 */
export const DISK_EFFECTS = {
  dropsWritten: ['lose-unfsynced', 'torn-write'],
  refusesWrites: ['disk-full'],
  healsDisk: ['heal-disk', 'heal-all'],
} as const satisfies Record<string, readonly (FaultKind | 'heal-all')[]>;

export function describeFault(fault: Fault | null): string {
  if (fault === null) return 'noop';
  const v = fault.value;
  if (v === null) return fault.f;
  if (typeof v === 'string') return `${fault.f}:${v}`;
  if (Array.isArray(v)) return `${fault.f}:[${v.join(',')}]`;
  return `${fault.f}:${JSON.stringify(v)}`;
}
