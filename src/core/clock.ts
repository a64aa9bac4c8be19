/** The host's monotonic clock in ns (CLOCK_MONOTONIC: shared by every process on the host). */
export function monoNs(): number {
  return Number(process.hrtime.bigint());
}

export const NS_PER_MS = 1_000_000;

/** The wall clock in ns since the epoch, finer than `Date.now()` (to the 256 ns a number holds there). */
export function wallClockNs(): number {
  return (performance.timeOrigin + performance.now()) * NS_PER_MS;
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

/** Parses `250ms`, `30s`, `10m`, `1h` or a bare number of seconds into ms. */
export function parseDurationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new Error(`cannot read duration "${text}": use e.g. 500ms, 30s, 10m or 1h`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
  return Math.round(n * factor);
}
