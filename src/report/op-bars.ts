import { NS_PER_MS } from '../core/clock.js';
import { pairOps, type Op } from '../core/op.js';

/** How an op ended; `open` when it never did (the run stopped first). */
export type BarOutcome = 'ok' | 'fail' | 'info' | 'open';

/** A client op as Jepsen's timeline draws it: a bar in its process's lane, invoke to completion. */
export interface OpBar {
  readonly process: number;
  readonly f: string;
  readonly outcome: BarOutcome;
  /** ms since the run started. */
  readonly startMs: number;
  readonly endMs: number;
  /** What was asked (the invocation's value). */
  readonly value: unknown;
  /** What came back (the completion's value), when it came. */
  readonly result?: unknown;
  readonly node?: string;
  readonly error?: string;
}

/** Every client op of the history as a bar; one never completed lasts to `endMs`, the run's end. */
export function opBars(ops: readonly Op[], endMs: number): OpBar[] {
  return pairOps(ops)
    .filter(({ invoke }) => typeof invoke.process === 'number')
    .map(({ invoke, completion }) => {
      const startMs = invoke.time / NS_PER_MS;
      return {
        process: invoke.process as number,
        f: invoke.f,
        outcome: completion === undefined ? 'open' : completion.type === 'invoke' ? 'open' : completion.type,
        startMs,
        endMs: completion === undefined ? Math.max(startMs, endMs) : completion.time / NS_PER_MS,
        value: invoke.value,
        ...(completion !== undefined ? { result: completion.value } : {}),
        ...(invoke.node !== undefined ? { node: invoke.node } : {}),
        ...(completion?.error !== undefined ? { error: completion.error } : {}),
      } satisfies OpBar;
    })
    .sort((a, b) => a.startMs - b.startMs);
}

/** The lanes of the timeline: which lane each process takes, and the processes of each lane in order. */
export interface Lanes {
  readonly laneOf: ReadonlyMap<number, number>;
  readonly processes: readonly (readonly number[])[];
}

/**
 * A lane per client process, as Jepsen's timeline has them, packed: a worker whose op ended
 * `info` goes on under a new process and never uses the old one again, so the new process takes
 * the first lane free by then (lowest first) rather than a lane of its own. At any moment a lane
 * holds one process; the lanes are as many as processes ever ran at once (the concurrency).
 */
export function processLanes(bars: readonly OpBar[]): Lanes {
  const span = new Map<number, { from: number; to: number }>();
  for (const b of bars) {
    const s = span.get(b.process);
    if (s === undefined) span.set(b.process, { from: b.startMs, to: b.endMs });
    else {
      s.from = Math.min(s.from, b.startMs);
      s.to = Math.max(s.to, b.endMs);
    }
  }
  const order = [...span.entries()].sort((a, b) => a[1].from - b[1].from || a[0] - b[0]);
  const laneEnds: number[] = [];
  const processes: number[][] = [];
  const laneOf = new Map<number, number>();
  for (const [process, { from, to }] of order) {
    let lane = laneEnds.findIndex((end) => end <= from);
    if (lane < 0) {
      lane = laneEnds.length;
      laneEnds.push(to);
      processes.push([]);
    } else {
      laneEnds[lane] = to;
    }
    processes[lane].push(process);
    laneOf.set(process, lane);
  }
  return { laneOf, processes };
}

/** The distinct `f`s of the bars, in order of first use. */
export function opFs(bars: readonly OpBar[]): string[] {
  return [...new Set(bars.map((b) => b.f))];
}

/**
 * At most `max` bars, for a page that stays light: every `fail`, `info` and `open` bar kept, and
 * `ok` ones taken evenly across the run. Returns them in time order and how many were left out.
 */
export function thinBars(bars: readonly OpBar[], max: number): { bars: OpBar[]; leftOut: number } {
  if (bars.length <= max) return { bars: [...bars], leftOut: 0 };
  const notOk = bars.filter((b) => b.outcome !== 'ok');
  const ok = bars.filter((b) => b.outcome === 'ok');
  const room = Math.max(0, max - notOk.length);
  // The i-th ok bar is kept when it starts a new one of `room` equal shares of them.
  const share = (i: number): number => Math.floor((i * room) / ok.length);
  const kept = ok.filter((_, i) => share(i) !== share(i - 1));
  const out = [...notOk, ...kept].sort((a, b) => a.startMs - b.startMs);
  return { bars: out, leftOut: bars.length - out.length };
}

/** Per window of `windowMs`, the q-quantiles of the latencies of the ops ending in it: `[mid ms, latency ms]`, NaN where none. */
export function windowedQuantiles(
  points: readonly { readonly atMs: number; readonly latencyMs: number }[],
  endMs: number,
  windowMs: number,
  quantiles: readonly number[],
): { readonly quantile: number; readonly points: (readonly [number, number])[] }[] {
  const n = Math.max(1, Math.ceil(endMs / windowMs));
  const windows: number[][] = Array.from({ length: n }, () => []);
  for (const p of points)
    windows[Math.min(n - 1, Math.max(0, Math.floor(p.atMs / windowMs)))].push(p.latencyMs);
  for (const w of windows) w.sort((a, b) => a - b);
  return quantiles.map((q) => ({
    quantile: q,
    points: windows.map((w, i) => {
      const rank = Math.min(w.length - 1, Math.max(0, Math.ceil(q * w.length) - 1));
      return [(i + 0.5) * windowMs, w.length === 0 ? Number.NaN : w[rank]] as const;
    }),
  }));
}

/** Ops completed per second in each window of `windowMs`, per `f` and outcome (`open` ops left out). */
export function rateByF(
  bars: readonly OpBar[],
  endMs: number,
  windowMs: number,
): {
  readonly f: string;
  readonly outcome: Exclude<BarOutcome, 'open'>;
  readonly points: (readonly [number, number])[];
}[] {
  const n = Math.max(1, Math.ceil(endMs / windowMs));
  const counts = new Map<string, number[]>();
  for (const b of bars) {
    if (b.outcome === 'open') continue;
    const key = `${b.f}\0${b.outcome}`;
    let c = counts.get(key);
    if (c === undefined) {
      c = new Array<number>(n).fill(0);
      counts.set(key, c);
    }
    c[Math.min(n - 1, Math.max(0, Math.floor(b.endMs / windowMs)))]++;
  }
  const perSecond = 1000 / windowMs;
  return [...counts.entries()].map(([key, c]) => {
    const [f, outcome] = key.split('\0') as [string, Exclude<BarOutcome, 'open'>];
    return { f, outcome, points: c.map((k, i) => [(i + 0.5) * windowMs, k * perSecond] as const) };
  });
}
