import { createHash, type Hash } from 'node:crypto';

import type { EventAttrs } from '../core/event.js';
import { Rng } from '../core/random.js';
import { type DiskFault, type StorageContract, SimDisk, type Tear } from './disk.js';
import { type PartitionMode, SimNetwork } from './network.js';
import { ProcessExit, SimProcess } from './process.js';
import { PHASE, Scheduler, type SimEvent } from './scheduler.js';

export interface WorldOptions {
  readonly seed: number;
  /** What the disks promise when the power fails (default C2, the FUSE disk layer's rule). */
  readonly contract?: StorageContract;
  /** How cuts behave (default `proxy`, the backend a run without root uses). */
  readonly partitionMode?: PartitionMode;
  /** One-way latency per chunk, uniform in [min, max] ms (default about loopback through a proxy). */
  readonly latencyMs?: readonly [number, number];
  /** Hosts that reach the others directly, never through a cut or a proxy (default `client`). */
  readonly directHosts?: readonly string[];
  /** One-way latency to and from a direct host (plain loopback, no proxy). */
  readonly directLatencyMs?: readonly [number, number];
  /** A start runs the program after a boot delay uniform in [min, max] ms. */
  readonly bootDelayMs?: readonly [number, number];
}

const DEFAULT_LATENCY_MS: readonly [number, number] = [0.2, 1];
const DEFAULT_DIRECT_LATENCY_MS: readonly [number, number] = [0.03, 0.1];
const DEFAULT_BOOT_DELAY_MS: readonly [number, number] = [20, 60];
/** A wait on the world that sees no event for this long in virtual time has nothing left to wait for. */
const DEFAULT_LIMIT_MS = 60_000;

/** A probe event as the world observed it, at its virtual time. */
export interface Observed {
  readonly timeMs: number;
  readonly node: string;
  readonly type: string;
  readonly attrs?: EventAttrs;
}

/** A line a process printed, at its virtual time. */
export interface Printed {
  readonly timeMs: number;
  readonly host: string;
  readonly stream: 'stdout' | 'stderr';
  readonly line: string;
}

/** How a process ended: its exit status, or `killed`. */
export type Ending = { readonly code: number } | 'killed';

const macrotask = (): Promise<void> =>
  new Promise((resolve) => {
    setImmediate(resolve);
  });

/**
 * A simulated world: hosts running processes on one virtual clock and one seeded event heap, a
 * simulated network between them and a simulated disk each. Everything random comes from the
 * world's generator (forked per host, per disk, per process incarnation), so a seed replays the
 * world exactly; `digest()` sums up everything observable.
 *
 * Driving it: `run`, `runUntil` and `settle` run events one at a time, each in its own turn of
 * Node's event loop (so promise callbacks run between events, as after a real callback).
 */
export class World {
  readonly scheduler = new Scheduler();
  readonly rng: Rng;
  readonly network: SimNetwork;
  readonly events: Observed[] = [];
  readonly ended = new Map<string, Ending[]>();
  private readonly disks = new Map<string, SimDisk>();
  private readonly current = new Map<string, SimProcess>();
  private readonly all: SimProcess[] = [];
  private readonly incarnations = new Map<string, number>();
  private readonly clockOffsets = new Map<string, number>();
  private readonly observers: ((event: Observed) => void)[] = [];
  private readonly printers: ((printed: Printed) => void)[] = [];
  private readonly hash: Hash = createHash('sha256');

  constructor(private readonly options: WorldOptions) {
    this.rng = new Rng(options.seed);
    this.network = new SimNetwork(this, this.rng.fork('network'), {
      mode: options.partitionMode ?? 'proxy',
      latencyMs: options.latencyMs ?? DEFAULT_LATENCY_MS,
      directLatencyMs: options.directLatencyMs ?? DEFAULT_DIRECT_LATENCY_MS,
      directHosts: new Set(options.directHosts ?? ['client']),
    });
  }

  get nowMs(): number {
    return this.scheduler.nowMs;
  }

  disk(host: string): SimDisk {
    let disk = this.disks.get(host);
    if (!disk) {
      disk = new SimDisk(this.options.contract ?? 'C2', this.rng.fork(`disk:${host}`));
      this.disks.set(host, disk);
    }
    return disk;
  }

  /** Replaces `host`'s disk with an empty one (a wiped data directory). */
  wipeDisk(host: string): void {
    this.disks.delete(host);
    this.record(`wipe ${host}`);
  }

  /** The host's wall clock runs this far from virtual time (a clock fault); timers are unaffected. */
  setClockOffset(host: string, offsetMs: number): void {
    this.clockOffsets.set(host, offsetMs);
    this.record(`clock ${host} ${offsetMs}`);
  }

  clockOffsetMs(host: string): number {
    return this.clockOffsets.get(host) ?? 0;
  }

  /** The process running on `host` now, if any. */
  process(host: string): SimProcess | undefined {
    const p = this.current.get(host);
    return p?.alive ? p : undefined;
  }

  /**
   * Starts a new incarnation of a process on `host`, running `main` after a boot delay. Throws if
   * one is running there.
   */
  start(host: string, main: (process: SimProcess) => void): SimProcess {
    if (this.process(host)) throw new Error(`sim: ${host} is running already; kill it first`);
    const incarnation = (this.incarnations.get(host) ?? 0) + 1;
    this.incarnations.set(host, incarnation);
    const process = new SimProcess(this, host, incarnation, this.rng.fork(`process:${host}#${incarnation}`));
    this.current.set(host, process);
    this.all.push(process);
    const [min, max] = this.options.bootDelayMs ?? DEFAULT_BOOT_DELAY_MS;
    const bootMs = min + this.rng.next() * (max - min);
    this.record(`start ${host}#${incarnation} boot ${bootMs}`);
    this.scheduler.after(bootMs, PHASE.timers, process, () => {
      main(process);
    });
    return process;
  }

  /** SIGKILL: the process's timers and queued events are dropped, its sockets closed; its disk keeps its page cache. */
  kill(host: string): void {
    const process = this.process(host);
    if (process) this.endProcess(process, 'killed');
  }

  /** The power fails on `host`: its process dies and its disk keeps what its contract promises. */
  powerLoss(host: string): void {
    this.kill(host);
    this.disk(host).crash();
    this.record(`power-loss ${host}`);
  }

  /**
   * The host's disk loses what its contract does not keep at a crash (its process must be dead):
   * the disk fault `lose-unfsynced`, or with `tear` the disk fault `torn-write`.
   */
  crashDisk(host: string, tear?: Tear): void {
    if (this.process(host)) throw new Error(`sim: ${host} is running; kill it before its disk crashes`);
    this.disk(host).crash(tear);
    this.record(`disk-crash ${host}${tear ? ` tear ${tear.seed} ${tear.cut}` : ''}`);
  }

  /** The host's disk answers these faults (fsync EIO, write ENOSPC) until they are set again. */
  setDiskFaults(host: string, faults: readonly DiskFault[]): void {
    this.disk(host).faults = [...faults];
    this.record(`disk-faults ${host} ${faults.map((f) => `${f.op}:${f.code}`).join(',') || 'none'}`);
  }

  /** SIGSTOP: what comes due is held, in order. */
  pause(host: string): void {
    const process = this.process(host);
    if (process) process.paused = true;
    this.record(`pause ${host}`);
  }

  /** SIGCONT: what came due while paused runs now, in the order it came due. */
  resume(host: string): void {
    const process = this.process(host);
    if (!process?.paused) return;
    process.paused = false;
    this.record(`resume ${host}`);
    for (const event of process.release()) {
      this.scheduler.at(this.nowMs, event.phase, process, event.run);
    }
  }

  /** What every incarnation on `host` printed, stdout then stderr per incarnation. */
  outputOf(host: string): string {
    return this.all
      .filter((p) => p.host === host)
      .map((p) => [...p.stdout, ...p.stderr].map((l) => `${l}\n`).join(''))
      .join('');
  }

  /** Ends a process (an exit status, or killed). */
  endProcess(process: SimProcess, ending: number | 'killed'): void {
    if (!process.alive) return;
    process.alive = false;
    if (typeof ending === 'number') process.exitCode = ending;
    const list = this.ended.get(process.host) ?? [];
    list.push(ending === 'killed' ? 'killed' : { code: ending });
    this.ended.set(process.host, list);
    this.record(`end ${process.host}#${process.incarnation} ${ending}`);
    this.network.processEnded(process);
    for (const f of process.onEnd.splice(0)) f();
  }

  /** A probe event of a process on `node`. */
  observe(node: string, type: string, attrs?: EventAttrs): void {
    const event: Observed = attrs
      ? { timeMs: this.nowMs, node, type, attrs }
      : { timeMs: this.nowMs, node, type };
    this.events.push(event);
    this.hash.update(`${this.nowMs} ${node} ${type} ${attrs ? JSON.stringify(attrs) : ''}\n`);
    for (const o of this.observers) o(event);
  }

  onObserve(observer: (event: Observed) => void): void {
    this.observers.push(observer);
  }

  /** A line printed by a process on `host`. */
  printed(host: string, stream: 'stdout' | 'stderr', line: string): void {
    if (this.printers.length === 0) return;
    const printed: Printed = { timeMs: this.nowMs, host, stream, line };
    for (const p of this.printers) p(printed);
  }

  /** Hears every line a process prints, at its virtual time. */
  onPrinted(printer: (printed: Printed) => void): void {
    this.printers.push(printer);
  }

  /** Adds a line to the digest, stamped with virtual time. */
  record(line: string): void {
    this.hash.update(`${this.nowMs} ${line}\n`);
  }

  /** Sums up everything observable so far, with the events run and the generator's next value. */
  digest(): string {
    const h = this.hash.copy();
    h.update(`events ${this.scheduler.executed} rng ${this.rng.fork('digest').nextU32()} now ${this.nowMs}`);
    return h.digest('hex');
  }

  /** Runs one event; false when none is due by `untilMs`. */
  step(untilMs = Infinity): boolean {
    const event = this.scheduler.take(untilMs);
    if (!event) return false;
    this.runEvent(event);
    return true;
  }

  /** Runs every event due within `durationMs` of virtual time, then moves the clock to its end. */
  async run(durationMs: number): Promise<void> {
    const until = this.nowMs + durationMs;
    while (this.step(until)) await macrotask();
    this.scheduler.advanceTo(until);
  }

  /** Runs events until `done()` holds; throws when it does not within `limitMs` of virtual time. */
  async runUntil<T>(what: string, done: () => T | undefined, limitMs = DEFAULT_LIMIT_MS): Promise<T> {
    const until = this.nowMs + limitMs;
    for (;;) {
      const value = done();
      if (value !== undefined && value !== false) return value;
      if (!this.step(until))
        throw new Error(`sim: no ${what} within ${limitMs} ms (virtual time ${this.nowMs})`);
      await macrotask();
    }
  }

  /** Runs events until `promise` settles, and gives its outcome. */
  async settle<T>(promise: Promise<T>, limitMs = DEFAULT_LIMIT_MS): Promise<T> {
    let settled = false;
    const watched = promise.finally(() => {
      settled = true;
    });
    await macrotask();
    await this.runUntil('answer', () => (settled ? true : undefined), limitMs);
    return watched;
  }

  /**
   * Runs events until `promise` settles, with no bound on virtual time, holding virtual time (no
   * event runs) while `holding()` says the harness awaits real work (a file write, a thread): what
   * the harness does then lands at the same virtual time however long the work takes. Throws when
   * no event is left and nothing real is awaited (the harness waits for what cannot come).
   */
  async drive<T>(promise: Promise<T>, holding: () => boolean): Promise<T> {
    let settled = false;
    const watched = promise.finally(() => {
      settled = true;
    });
    await macrotask();
    while (!settled) {
      if (!holding()) {
        if (!this.step()) {
          // Nothing due: the harness may still be finishing real work begun just now.
          if (!holding() && !settled)
            throw new Error(`sim: the harness waits with no event left (virtual time ${this.nowMs})`);
        }
      }
      await macrotask();
    }
    return watched;
  }

  private runEvent(event: SimEvent): void {
    try {
      event.run();
    } catch (error) {
      if (error instanceof ProcessExit) return;
      const owner = event.owner;
      if (!(owner instanceof SimProcess)) throw error;
      // An uncaught exception ends a Node process with status 1 and the error on stderr.
      owner.env.stderr(`Uncaught ${String(error)}`);
      this.endProcess(owner, 1);
    }
  }
}
