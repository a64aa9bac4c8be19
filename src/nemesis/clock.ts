import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where Debian's `faketime` package puts the preload library, per architecture. */
const LIBFAKETIME_PATHS = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];
const LIBFAKETIME_NAME = 'libfaketime.so.1';
/** How often drifting and strobing clocks get their control file rewritten. */
export const CLOCK_TICK_MS = 50;
const MS_PER_S = 1000;
/** libfaketime's shared memory and semaphore, named after the first process that loads it. */
const SHM_DIR = '/dev/shm';

/** The fix printed when libfaketime is missing. */
export const LIBFAKETIME_FIX = 'apt-get install faketime';

/** The path of libfaketime.so.1, or undefined when the `faketime` package is not installed. */
export function findLibfaketime(): string | undefined {
  const known = LIBFAKETIME_PATHS.find((p) => existsSync(p));
  if (known) return known;
  try {
    const files = execFileSync('dpkg', ['-L', 'libfaketime'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return files.split('\n').find((f) => f.endsWith(`/${LIBFAKETIME_NAME}`) && existsSync(f));
  } catch {
    return undefined;
  }
}

/**
 * A control file's text: libfaketime's relative offset in seconds (it takes fractions), so
 * `-60000` ms is `-60.000` and no offset is `+0.000`.
 */
export function faketimeSpec(offsetMs: number): string {
  const rounded = Math.round(offsetMs);
  const sign = rounded < 0 ? '-' : '+';
  return `${sign}${(Math.abs(rounded) / MS_PER_S).toFixed(3)}\n`;
}

/** Where a node's clock control file lives: beside its logs, in the run dir. */
export function clockControlFile(runDir: string, node: string): string {
  return join(runDir, 'nodes', node, 'clock.faketime');
}

/** Writes a control file so a reader sees the old text or the new, never a partial one. */
export function writeControlFile(file: string, offsetMs: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.tmp`;
  writeFileSync(temp, faketimeSpec(offsetMs));
  renameSync(temp, file);
}

/**
 * How node processes get a movable wall clock: libfaketime preloaded, reading the node's control
 * file on every call, with monotonic clocks left real (timers and timeouts keep working).
 */
export class ClockPreload {
  constructor(
    private readonly library: string,
    private readonly runDir: string,
  ) {}

  /** The environment a node process starts with. */
  env(node: string): Record<string, string> {
    const file = clockControlFile(this.runDir, node);
    if (!existsSync(file)) writeControlFile(file, 0);
    return {
      LD_PRELOAD: this.library,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    };
  }

  /**
   * The files libfaketime creates for a process it is loaded into (its children share them); a
   * process that exits normally removes them, a killed one leaves them for the harness to remove.
   */
  sharedFiles(pid: number): string[] {
    return [join(SHM_DIR, `faketime_shm_${pid}`), join(SHM_DIR, `sem.faketime_sem_${pid}`)];
  }
}

interface NodeClock {
  /** Offset from real time, in ms. */
  baseMs: number;
  drift?: { readonly rate: number; readonly sinceMs: number };
  strobe?: { readonly deltaMs: number; readonly periodMs: number; readonly sinceMs: number };
}

/**
 * The nodes' wall clocks as the nemesis sets them: offsets written to each node's control file,
 * drift and strobe advanced by a ticker until reset. Unfaulted nodes have no entry (offset 0).
 */
export class NodeClocks {
  private readonly clocks = new Map<string, NodeClock>();
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly runDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The node's current offset from real time, in ms. */
  offsetMs(node: string): number {
    const clock = this.clocks.get(node);
    if (!clock) return 0;
    const now = this.now();
    let offset = clock.baseMs;
    if (clock.drift) offset += (clock.drift.rate - 1) * (now - clock.drift.sinceMs);
    if (clock.strobe && Math.floor((now - clock.strobe.sinceMs) / clock.strobe.periodMs) % 2 === 0) {
      offset += clock.strobe.deltaMs;
    }
    return offset;
  }

  /** Nodes whose clock is off real time. */
  get faulted(): readonly string[] {
    return [...this.clocks.keys()];
  }

  bump(nodes: readonly string[], deltaMs: number): void {
    for (const node of nodes) this.settle(node).baseMs += deltaMs;
    this.apply(nodes);
  }

  drift(nodes: readonly string[], rate: number): void {
    for (const node of nodes) this.settle(node).drift = { rate, sinceMs: this.now() };
    this.apply(nodes);
  }

  strobe(nodes: readonly string[], deltaMs: number, periodMs: number): void {
    for (const node of nodes) this.settle(node).strobe = { deltaMs, periodMs, sinceMs: this.now() };
    this.apply(nodes);
  }

  /** Puts the nodes' clocks back on real time (every faulted node's when `nodes` is absent). */
  reset(nodes: readonly string[] = this.faulted): void {
    for (const node of nodes) {
      if (!this.clocks.delete(node)) continue;
      writeControlFile(clockControlFile(this.runDir, node), 0);
    }
    this.retick();
  }

  /** Stops the ticker (control files stay in the run dir, as the record of the last offsets). */
  close(): void {
    this.reset();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
  }

  /** The node's clock with what drift has done so far folded into its base offset. */
  private settle(node: string): NodeClock {
    const clock = this.clocks.get(node) ?? { baseMs: 0 };
    const now = this.now();
    if (clock.drift) {
      clock.baseMs += (clock.drift.rate - 1) * (now - clock.drift.sinceMs);
      clock.drift = { rate: clock.drift.rate, sinceMs: now };
    }
    this.clocks.set(node, clock);
    return clock;
  }

  private apply(nodes: readonly string[]): void {
    for (const node of nodes) writeControlFile(clockControlFile(this.runDir, node), this.offsetMs(node));
    this.retick();
  }

  /** Runs the ticker while some clock drifts or strobes. */
  private retick(): void {
    const moving = [...this.clocks.values()].some((c) => c.drift ?? c.strobe);
    if (moving && !this.ticker) {
      this.ticker = setInterval(() => {
        for (const [node, clock] of this.clocks) {
          if (clock.drift ?? clock.strobe) {
            writeControlFile(clockControlFile(this.runDir, node), this.offsetMs(node));
          }
        }
      }, CLOCK_TICK_MS);
      this.ticker.unref();
    } else if (!moving && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }
}
