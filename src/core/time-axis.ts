/**
 * Time axes as people read them: ticks at round steps (100 ms, 1 s, 15 s, 1 min, …) labelled
 * "850 ms", "3.4 s", "1 min 20 s", "1 h 5 min", on ms since the run started.
 *
 * Both functions are self-contained (no module-level names), so a page can carry their source in
 * its zoom script and label a zoomed axis exactly as the page was written.
 */

/**
 * The label of a tick at `ms`, with the precision a tick step of `stepMs` needs; an axis that
 * reaches `axisEndMs` (1 s or more) reads in seconds throughout.
 */
export function formatTime(ms: number, stepMs: number, axisEndMs = ms): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  // The fewest decimals (up to 3) that write a multiple of the step exactly.
  const decimalsOf = (step: number): number => {
    for (let d = 0; d < 3; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
    return 3;
  };
  if (stepMs < 1 || (Math.abs(axisEndMs) < 1000 && stepMs < 1000))
    return `${sign}${abs.toFixed(decimalsOf(stepMs))} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(decimalsOf(stepMs / 1000))} s`;
  const totalS = Math.round(abs / 1000);
  if (totalS < 3600) {
    const min = Math.floor(totalS / 60);
    const s = totalS % 60;
    return `${sign}${min} min${s === 0 ? '' : ` ${s} s`}`;
  }
  const totalMin = Math.round(abs / 60_000);
  const h = Math.floor(totalMin / 60);
  const min = totalMin % 60;
  return `${sign}${h} h${min === 0 ? '' : ` ${min} min`}`;
}

/**
 * Ticks over `[fromMs, toMs]`: the multiples of the smallest round step giving at most `maxTicks`
 * intervals, each with its label.
 */
export function timeTicks(
  fromMs: number,
  toMs: number,
  maxTicks: number,
): { readonly ms: number; readonly label: string; readonly stepMs: number }[] {
  const span = Math.max(toMs - fromMs, 1e-6);
  const raw = span / Math.max(1, maxTicks);
  const round = [1, 2, 5, 10, 15, 20, 30, 50];
  const timeSteps = [
    1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
    3_600_000,
  ];
  let stepMs = timeSteps.find((s) => s >= raw);
  if (raw < 1000) {
    const magnitude = 10 ** Math.floor(Math.log10(raw));
    stepMs = ([1, 2, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  } else if (stepMs === undefined) {
    stepMs = (round.find((m) => m * 3_600_000 >= raw) ?? Math.ceil(raw / 3_600_000)) * 3_600_000;
  }
  const out: { ms: number; label: string; stepMs: number }[] = [];
  const first = Math.ceil(fromMs / stepMs - 1e-9);
  for (let i = first; i * stepMs <= toMs + stepMs * 1e-9; i++) {
    const ms = Number((i * stepMs).toPrecision(12));
    out.push({ ms, label: formatTime(ms, stepMs, toMs), stepMs });
  }
  return out;
}
