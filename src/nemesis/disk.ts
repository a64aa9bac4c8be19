import type { DiskLayer } from '../cluster/disk-layer.js';
import { monoNs } from '../core/clock.js';
import type { FaultKind, TornGranularity } from '../core/fault.js';

/** A node's disk as the nemesis left it: the modes it turned on, and whether it lost its unfsynced writes. */
interface NodeDisk {
  fsyncError: boolean;
  full: boolean;
  slowMs: number;
  /** Killed and rolled back by `lose-unfsynced` or `torn-write`: `heal-disk` starts it again. */
  lost: boolean;
}

/** The disk faults a node may stop on by itself: fail-stop on EIO from fsync, or on ENOSPC. */
export type DiskExitCause = 'fsync-error' | 'disk-full';

/** A cause as the run's history and terminal say it. */
export const DISK_EXIT_CAUSES: Readonly<Record<DiskExitCause, string>> = {
  'fsync-error': 'fsync-error (fsync answering EIO)',
  'disk-full': 'disk-full (writes answering ENOSPC)',
};

/** Whether a process started at `startedNs` (unknown: assume so) ran while the window's fault was in effect. */
function livedIn(w: ErrorWindow, startedNs: number | undefined): boolean {
  return startedNs === undefined || w.toNs === undefined || startedNs <= w.toNs;
}

/** How long after `heal-disk` an exit still counts as caused by the fault (a call that failed just before). */
export const INDUCED_EXIT_GRACE_MS = 2_000;
/**
 * How long after that grace a process that began a crash report within the fault's window (or the
 * grace) may still be writing it when a signal ends it (Redis's report runs a memory test of
 * seconds).
 */
export const CRASH_REPORT_MAX_MS = 30_000;
const NS_PER_MS = 1_000_000;

/**
 * A stretch of time (monotonic ns) during which a node's disk answered errors, and the sizes of
 * the node's log files when it began (when the nemesis was told how to read them).
 */
export interface ErrorWindow {
  readonly node: string;
  readonly cause: DiskExitCause;
  readonly fromNs: number;
  readonly fromBytes?: Readonly<Record<string, number>>;
  toNs?: number;
  /**
   * The sizes of the node's log files at the end of the grace after the window closed: output
   * written before them may be the fault's doing. Absent while the window or its grace lasts.
   */
  untilBytes?: Readonly<Record<string, number>>;
}

/** What differs where the disks are not the FUSE layer's (the simulator's). */
export interface NodeDisksOptions {
  /** Runs `run` once `ms` have passed, on the run's clock (default the host's, not holding the process). */
  readonly after?: (ms: number, run: () => void) => void;
  /** The disk fault kinds the layer does not do. */
  readonly lacks?: readonly FaultKind[];
}

function afterReal(ms: number, run: () => void): void {
  setTimeout(run, ms).unref();
}

/** What `heal` leaves for the nemesis to start again. */
export interface Healed {
  /** Nodes killed by `lose-unfsynced` or `torn-write` since their last heal. */
  readonly lost: readonly string[];
  /** Nodes whose fsyncs or writes were failing (an exit of theirs was the fault's doing). */
  readonly errored: readonly string[];
}

/**
 * The nodes' disks as the nemesis sets them, through each node's FUSE layer: unfsynced writes
 * dropped or torn, fsync failing, reads and writes slowed, writes refused as if the disk were full.
 * Healthy disks have no entry. It also remembers when each node's disk answered errors, so an exit
 * of the node then is known as the fault's doing (`exitCause`).
 */
export class NodeDisks {
  private readonly disks = new Map<string, NodeDisk>();
  private readonly windows: ErrorWindow[] = [];

  constructor(
    private readonly layer: Pick<DiskLayer, 'command' | 'isMounted'>,
    private readonly now: () => number = monoNs,
    /** The sizes of a node's log files now: where the output it writes under a fault starts. */
    private readonly logSizes?: (node: string) => Readonly<Record<string, number>>,
    /** How finely a `torn-write` whose value does not say cuts (see `TornGranularity`). */
    readonly tornGranularity: TornGranularity = 'sector',
    private readonly options: NodeDisksOptions = {},
  ) {}

  /** The disk fault kinds the layer does not do (not offered to a policy). */
  get lacks(): readonly FaultKind[] {
    return this.options.lacks ?? [];
  }

  /** Nodes whose disk is faulted or that lost writes since the last heal. */
  get faulted(): readonly string[] {
    return [...this.disks.keys()];
  }

  /** Drops what each node wrote and did not fsync. The nodes' processes must be dead. */
  async loseUnfsynced(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) {
      if (this.layer.isMounted(node)) await this.layer.command(node, 'drop-unfsynced');
      this.disk(node).lost = true;
    }
  }

  /**
   * Like `loseUnfsynced`, but each file keeps a prefix of its last unsynced write, its length
   * picked from `seed` and the file's path, in whole sectors or not (see the layer's
   * `torn-write`). The processes must be dead.
   */
  async tornWrite(
    nodes: readonly string[],
    seed: number,
    granularity: TornGranularity = this.tornGranularity,
  ): Promise<void> {
    for (const node of nodes) {
      if (this.layer.isMounted(node)) await this.layer.command(node, `torn-write ${seed} ${granularity}`);
      this.disk(node).lost = true;
    }
  }

  async fsyncError(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) {
      const began = this.began(node);
      await this.send(node, 'fsync-error on');
      this.disk(node).fsyncError = true;
      this.open(node, 'fsync-error', began);
    }
  }

  async full(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) {
      const began = this.began(node);
      await this.send(node, 'full on');
      this.disk(node).full = true;
      this.open(node, 'disk-full', began);
    }
  }

  async slow(nodes: readonly string[], delayMs: number): Promise<void> {
    for (const node of nodes) {
      await this.send(node, `slow ${Math.round(delayMs)}`);
      this.disk(node).slowMs = delayMs;
    }
  }

  /**
   * Turns every mode off on the nodes' disks (every faulted node's when `nodes` is absent); returns
   * the nodes among them that lost their unfsynced writes and those whose disk answered errors,
   * for the caller to start again.
   */
  async heal(nodes: readonly string[] = this.faulted): Promise<Healed> {
    const lost: string[] = [];
    const errored: string[] = [];
    for (const node of nodes) {
      const disk = this.disks.get(node);
      if (!disk) continue;
      if (disk.fsyncError) await this.send(node, 'fsync-error off');
      if (disk.full) await this.send(node, 'full off');
      if (disk.slowMs > 0) await this.send(node, 'slow 0');
      if (disk.lost) lost.push(node);
      if (disk.fsyncError || disk.full) errored.push(node);
      this.close(node);
      this.disks.delete(node);
    }
    return { lost, errored };
  }

  /**
   * The disk fault an exit of `node` at `ts` (monotonic ns) is put down to: one that made its
   * fsyncs or writes fail at that moment, or up to `INDUCED_EXIT_GRACE_MS` before it; undefined
   * when none did. `startedNs`: when the exited process was started; a fault healed before that
   * never failed a call of it (a node restarted after `heal-disk` that exits at once is judged
   * for what it says, not put down to the fault).
   */
  exitCause(node: string, ts: number, startedNs?: number): DiskExitCause | undefined {
    return this.errorAt(node, ts, startedNs)?.cause;
  }

  /** The first window of disk errors an exit of `node` at `ts` is put down to (see `exitCause`). */
  errorAt(node: string, ts: number, startedNs?: number): ErrorWindow | undefined {
    const graceNs = INDUCED_EXIT_GRACE_MS * NS_PER_MS;
    return this.windows.find(
      (w) =>
        w.node === node &&
        w.fromNs <= ts &&
        (w.toNs === undefined || ts <= w.toNs + graceNs) &&
        livedIn(w, startedNs),
    );
  }

  /**
   * The windows of disk errors on `node` a crash report that a signal ended at `ts` may have begun
   * in: begun before `ts`, ended at most the grace and `CRASH_REPORT_MAX_MS` before it, and not
   * before the process was started.
   */
  reportWindows(node: string, ts: number, startedNs?: number): readonly ErrorWindow[] {
    const boundNs = (INDUCED_EXIT_GRACE_MS + CRASH_REPORT_MAX_MS) * NS_PER_MS;
    return this.windows.filter(
      (w) =>
        w.node === node &&
        w.fromNs <= ts &&
        (w.toNs === undefined || ts <= w.toNs + boundNs) &&
        livedIn(w, startedNs),
    );
  }

  /** Forgets the windows no exit from now on can fall in (call once past exits are judged). */
  forgetEnded(): void {
    const before = this.now() - (INDUCED_EXIT_GRACE_MS + CRASH_REPORT_MAX_MS) * NS_PER_MS;
    const keep = this.windows.filter((w) => w.toNs === undefined || w.toNs >= before);
    this.windows.splice(0, this.windows.length, ...keep);
  }

  /**
   * The time and the node's log sizes just before its disk is made to fail: the node may fail and
   * say so before the layer's answer is back.
   */
  private began(node: string): Pick<ErrorWindow, 'fromNs' | 'fromBytes'> {
    const fromBytes = this.logSizes?.(node);
    return { fromNs: this.now(), ...(fromBytes !== undefined ? { fromBytes } : {}) };
  }

  private open(node: string, cause: DiskExitCause, began: Pick<ErrorWindow, 'fromNs' | 'fromBytes'>): void {
    if (this.windows.some((w) => w.node === node && w.cause === cause && w.toNs === undefined)) return;
    this.windows.push({ node, cause, ...began });
  }

  private close(node: string): void {
    const at = this.now();
    const closed = this.windows.filter((w) => w.node === node && w.toNs === undefined);
    for (const w of closed) w.toNs = at;
    const logSizes = this.logSizes;
    if (closed.length === 0 || logSizes === undefined) return;
    // Where the output the fault may have started ends: the log sizes once the grace is over.
    const after = this.options.after ?? afterReal;
    after(INDUCED_EXIT_GRACE_MS, () => {
      const untilBytes = logSizes(node);
      for (const w of closed) w.untilBytes = untilBytes;
    });
  }

  private async send(node: string, line: string): Promise<void> {
    if (!this.layer.isMounted(node)) throw new Error(`${node} has no disk layer (it has not started yet)`);
    await this.layer.command(node, line);
  }

  private disk(node: string): NodeDisk {
    let disk = this.disks.get(node);
    if (!disk) {
      disk = { fsyncError: false, full: false, slowMs: 0, lost: false };
      this.disks.set(node, disk);
    }
    return disk;
  }
}
