/**
 * The time the harness reads: its own waits (windows, warm-up, reset, recovery bounds, client
 * timeouts), its stamps (ops, steps, schedules) and its timers. `realClock` is the host's; a
 * simulated run passes a virtual one, so nothing in it waits on a real timer.
 */
export interface Clock {
  /** Wall time in ms since the epoch (`Date.now()` on the real clock). */
  nowMs(): number;
  /** Monotonic time in ns (the host's CLOCK_MONOTONIC on the real clock: event stamps share it). */
  monoNs(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts (at once if it is aborted already). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `run` once after `ms`; the returned function cancels it (a no-op once it ran). */
  timer(ms: number, run: () => void): () => void;
  /** Runs `run` every `ms` until the returned function is called. */
  every(ms: number, run: () => void): () => void;
}

/** The host's monotonic clock in ns (CLOCK_MONOTONIC: shared by every process on the host). */
export function monoNs(): number {
  return Number(process.hrtime.bigint());
}

export const NS_PER_MS = 1_000_000;

/** The wall clock in ns since the epoch, finer than `Date.now()` (to the 256 ns a number holds there). */
export function wallClockNs(): number {
  return (performance.timeOrigin + performance.now()) * NS_PER_MS;
}

/**
 * What `promise` gives, or `fallback` once `ms` have passed, whichever comes first; the timer goes
 * as soon as the race is decided. (A race against a bare `sleep` keeps its timer, and with it the
 * process, alive for the rest of the wait: a run that ended held on ~20 s for such stop waits.)
 */
export async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => {
        timer = setTimeout(() => {
          resolve(fallback);
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The host's clocks and Node's timers. */
export const realClock: Clock = {
  nowMs: () => Date.now(),
  monoNs,
  sleep,
  timer(ms, run) {
    const t = setTimeout(run, ms);
    return () => {
      clearTimeout(t);
    };
  },
  every(ms, run) {
    const t = setInterval(run, ms);
    return () => {
      clearInterval(t);
    };
  },
};

/** Parses `250ms`, `30s`, `10m`, `1h` or a bare number of seconds into ms. */
export function parseDurationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new Error(`cannot read duration "${text}": use e.g. 500ms, 30s, 10m or 1h`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
  return Math.round(n * factor);
}
