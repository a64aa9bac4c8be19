/** Past the budget by less than this, the faults are said to have ended at it. */
const LATE_FAULT_MS = 1_000;

/**
 * What followed the time budget, when the last schedule ran past it: no fault starts after the
 * budget and one still out there is cut short, so only the last schedule's reset, final reads and
 * checks (each in ms) follow it.
 */
export interface AfterBudget {
  /** When the last schedule's faults ended, in ms from the run's start (at most the budget, but for a call's last moments). */
  readonly faultsEndedMs: number;
  /** Healing every fault and waiting for the system to serve again (and a fresh cluster, if it stayed stuck). */
  readonly resetMs: number;
  readonly finalReadsMs: number;
  readonly checksMs: number;
}

/**
 * Where a run's wall time went. `--time` bounds the faults, counted from the run's start (start-up
 * included): no schedule or fault starts after it, and a fault call still out then is cut short;
 * the last schedule's reset, final reads and checks follow it, and then the run stops its nodes.
 * So a run ends later than its budget, by those; this says by how much, and why.
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
  /** When the last schedule ended after the budget: what followed it. */
  readonly afterBudget?: AfterBudget;
}

/** The timing of a run that started at `startMs`, ran its schedules in `[from, to]` and ended at `endMs`. */
export function runTiming(
  budgetMs: number,
  startMs: number,
  schedules: { readonly fromMs: number | undefined; readonly toMs: number | undefined },
  endMs: number,
  afterBudget?: AfterBudget,
): RunTiming {
  const from = Math.min(schedules.fromMs ?? endMs, endMs);
  const to = Math.max(from, Math.min(schedules.toMs ?? endMs, endMs));
  return {
    budgetMs,
    startupMs: Math.max(0, from - startMs),
    schedulesMs: to - from,
    stoppingMs: endMs - to,
    elapsedMs: Math.max(0, endMs - startMs),
    ...(afterBudget !== undefined ? { afterBudget } : {}),
  };
}

/** `mm:ss` of a time from the run's start. */
function minutes(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * One line: `budget reached at 10:00; reset 3.1 s, final reads 1.2 s, checks 0.4 s`, with when the
 * faults ended when that was not at the budget itself.
 */
export function describeAfterBudget(budgetMs: number, a: AfterBudget): string {
  const faults =
    a.faultsEndedMs < budgetMs
      ? ` (the faults ended at ${minutes(a.faultsEndedMs)})`
      : a.faultsEndedMs - budgetMs >= LATE_FAULT_MS
        ? ` (the last fault's call ended at ${minutes(a.faultsEndedMs)})`
        : '';
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  return `budget reached at ${minutes(budgetMs)}${faults}; reset ${s(a.resetMs)}, final reads ${s(a.finalReadsMs)}, checks ${s(a.checksMs)}`;
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
