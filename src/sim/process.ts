import type { EventAttrs } from '../core/event.js';
import type { Rng } from '../core/random.js';
import type { Probe } from '../probe/index.js';
import type { DiskFs, Net, NodeEnv, NodeIo, Timer } from '../systems/kvraft/seams.js';
import { type HostedProcess, PHASE, type Owner, type Scheduler, type SimEvent } from './scheduler.js';

/** Node clamps a timer's delay below 1 ms to 1 ms. */
const MIN_TIMER_MS = 1;

/** Thrown by a simulated process's `exit` to unwind the callback that called it. */
export class ProcessExit extends Error {
  constructor(readonly code: number) {
    super(`process exited with status ${code}`);
  }
}

/**
 * One incarnation of a simulated process on a host: its timers and socket events are the world's
 * events owned by it (dropped when it dies, held while it is paused), its randomness is the world's
 * generator forked for this incarnation, and it sees the world through `io` and `probe`.
 */
/** What a process asks of its world: its clock, its network and disk, and where its output goes. */
export interface ProcessWorld {
  readonly scheduler: Scheduler;
  readonly network: { netFor(process: HostedProcess): Net };
  clockOffsetMs(host: string): number;
  disk(host: string): { fsFor(process: HostedProcess): DiskFs };
  endProcess(process: SimProcess, ending: number | 'killed'): void;
  observe(node: string, type: string, attrs?: EventAttrs): void;
  /** A line the process printed (after it is added to the digest). */
  printed(host: string, stream: 'stdout' | 'stderr', line: string): void;
  record(line: string): void;
}

export class SimProcess implements Owner {
  alive = true;
  paused = false;
  exitCode: number | undefined;
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly env: NodeEnv;
  readonly io: NodeIo;
  readonly probe: Probe;
  /** Called when the process ends (killed or exited), once. */
  readonly onEnd: (() => void)[] = [];
  private held: SimEvent[] = [];

  constructor(
    private readonly world: ProcessWorld,
    readonly host: string,
    readonly incarnation: number,
    readonly rng: Rng,
  ) {
    const scheduler = world.scheduler;
    const timer = (event: SimEvent): Timer => ({
      cancel() {
        event.cancelled = true;
      },
    });
    const wallMs = (): number => scheduler.nowMs + world.clockOffsetMs(host);
    this.env = {
      wallMs,
      monoMs: () => scheduler.nowMs,
      setTimeout: (callback, delayMs) =>
        timer(scheduler.after(Math.max(MIN_TIMER_MS, delayMs), PHASE.timers, this, callback)),
      setInterval: (callback, intervalMs) => {
        const every = Math.max(MIN_TIMER_MS, intervalMs);
        const handle = { cancelled: false, event: undefined as SimEvent | undefined };
        const arm = (): void => {
          handle.event = scheduler.after(every, PHASE.timers, this, () => {
            arm();
            callback();
          });
        };
        arm();
        return {
          cancel() {
            if (handle.event) handle.event.cancelled = true;
          },
        };
      },
      setImmediate: (callback) => {
        scheduler.after(0, PHASE.immediate, this, callback);
      },
      random: () => this.rng.next(),
      log: (line) => {
        this.output('stdout', `${isoTime(wallMs())} ${line}`);
      },
      stdout: (line) => {
        this.output('stdout', line);
      },
      stderr: (line) => {
        this.output('stderr', line);
      },
      exit: (code) => {
        world.endProcess(this, code);
        throw new ProcessExit(code);
      },
    };
    this.io = { env: this.env, net: world.network.netFor(this), fs: world.disk(host).fsFor(this) };
    this.probe = {
      emit: (type: string, attrs?: EventAttrs) => {
        world.observe(host, type, attrs);
      },
      flush() {
        // events are observed as they are emitted
      },
      close() {
        // nothing to close
      },
    };
  }

  hold(event: SimEvent): void {
    this.held.push(event);
  }

  /** Runs what came due while paused, in the order it came due. */
  release(): SimEvent[] {
    const held = this.held;
    this.held = [];
    return held;
  }

  private output(stream: 'stdout' | 'stderr', line: string): void {
    this[stream].push(line);
    this.world.record(`${stream} ${this.host} ${line}`);
    this.world.printed(this.host, stream, line);
  }
}

/** ISO 8601 from ms since the epoch, as `Date#toISOString` gives (a pure conversion, no clock read). */
function isoTime(ms: number): string {
  // eslint-disable-next-line no-restricted-globals -- a conversion of a virtual time, not a clock read
  return new Date(ms).toISOString();
}
