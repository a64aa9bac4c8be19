import { totalmem } from 'node:os';

/** A search stopped because its memory would pass the bound: the verdict is unknown. */
export class MemoryLimitReached extends Error {
  constructor(why = 'linearizability search reached its memory limit') {
    super(why);
    this.name = 'MemoryLimitReached';
  }
}

/** What one thread's searches may hold. */
export interface MemoryLimits {
  /** Bytes the search's memo tables may take (its one large allocation). */
  readonly cacheBytes: number;
  /** The process's resident set past which every search stops (its other allocations). */
  readonly rssBytes: number;
}

export const NO_MEMORY_LIMIT: MemoryLimits = { cacheBytes: Infinity, rssBytes: Infinity };

/**
 * Share of the memory left under the bound that the memo tables may take: the search's other
 * allocations (its states, the heap's growth) take some of the rest. Measured: with all of it, a
 * check bounded to 150 MiB peaked at 152 MiB resident.
 */
const CACHE_SHARE_OF_FREE = 0.9;

/** Share of the machine's memory a check may take unless told otherwise. */
const DEFAULT_SHARE = 0.5;

/** The machine's (or cgroup's) memory does not change while a process runs: asked once. */
let defaultLimit: number | undefined;

/**
 * The default bound on a check's memory: half of what the machine has, or of the cgroup's limit
 * when the process runs under a smaller one (a container). Asked of the system once per process:
 * reading the cgroup's limit took longer than checking a small history.
 */
export function defaultMemoryLimitBytes(): number {
  defaultLimit ??= machineMemoryLimitBytes();
  return defaultLimit;
}

function machineMemoryLimitBytes(): number {
  const machine = totalmem();
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  const available =
    constrained !== undefined && constrained > 0 && constrained < machine ? constrained : machine;
  return Math.floor(available * DEFAULT_SHARE);
}

/**
 * Each of `threads` threads' limits under a bound on the whole process: the process's resident set
 * now (the history, the code) is taken first, and the memo tables share the rest.
 */
export function memoryLimitsFor(limitBytes: number, threads: number): MemoryLimits {
  if (limitBytes === Infinity) return NO_MEMORY_LIMIT;
  const free = Math.max(0, limitBytes - recentRss()) * CACHE_SHARE_OF_FREE;
  return { cacheBytes: Math.floor(free / Math.max(1, threads)), rssBytes: limitBytes };
}

/**
 * How old a resident-set reading may be to bound the memo tables of a new check: reading it costs
 * more than checking a small history, and each growth of the tables reads it afresh anyway.
 */
const RSS_READING_MAX_AGE_MS = 20;
let rssReading = { bytes: 0, atMs: -Infinity };

function recentRss(): number {
  const now = performance.now();
  if (now - rssReading.atMs > RSS_READING_MAX_AGE_MS)
    rssReading = { bytes: process.memoryUsage.rss(), atMs: now };
  return rssReading.bytes;
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/** `8g`, `512MiB`, `1.5G`, `1000000` (bytes) → bytes; units are powers of 1024. Throws on anything else. */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m === null ? undefined : UNITS[m[2].toLowerCase()];
  if (m === null || unit === undefined)
    throw new RangeError(`"${text}" is not a size: give a number with an optional unit, e.g. 8g or 512m`);
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!(bytes > 0)) throw new RangeError(`"${text}" is not a size above 0 bytes`);
  return bytes;
}

/** A byte count as people read it: `12.0 GiB`, `512 MiB`. */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} B`;
}
