/**
 * Where a run's wall time went. `--time` is the budget for starting schedules, counted from the
 * run's start (start-up included): no schedule starts after it, but one that started before runs
 * to its end, with its reset, final reads and checks, and then the run stops its nodes. So a run
 * ends later than its budget, by up to a schedule and its checks; this says by how much, and why.
 */
export interface RunTiming {
  /** `--time`. */
  readonly budgetMs: number;
  /** From the run's start until the first schedule: building the run, starting the cluster, warm-up. */
  readonly startupMs: number;
  /** The schedules, each with its reset, final reads and checks. */
  readonly schedulesMs: number;
  /** After the last schedule: saving what was learnt, stopping the nodes and observers. */
  readonly stoppingMs: number;
  /** The whole run (the sum of the three). */
  readonly elapsedMs: number;
}

/** The timing of a run that started at `startMs`, ran its schedules in `[from, to]` and ended at `endMs`. */
export function runTiming(
  budgetMs: number,
  startMs: number,
  schedules: { readonly fromMs: number | undefined; readonly toMs: number | undefined },
  endMs: number,
): RunTiming {
  const from = Math.min(schedules.fromMs ?? endMs, endMs);
  const to = Math.max(from, Math.min(schedules.toMs ?? endMs, endMs));
  return {
    budgetMs,
    startupMs: Math.max(0, from - startMs),
    schedulesMs: to - from,
    stoppingMs: endMs - to,
    elapsedMs: Math.max(0, endMs - startMs),
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/**
 * One line: `ran 84 s (--time 60 s, 24 s over): 12 s start-up, 68 s of schedules, 4 s stopping`.
 * The overrun is said with its cause: the last schedule, started within the budget, runs to its end.
 */
export function describeRunTiming(t: RunTiming): string {
  const over = t.elapsedMs - t.budgetMs;
  const budget = `--time ${seconds(t.budgetMs)}`;
  const against = over > 0 ? `${budget}, ${seconds(over)} over` : budget;
  return (
    `ran ${seconds(t.elapsedMs)} (${against}): ${seconds(t.startupMs)} start-up, ` +
    `${seconds(t.schedulesMs)} of schedules with their checks, ${seconds(t.stoppingMs)} stopping`
  );
}
